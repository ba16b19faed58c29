import type { UseQueryResult } from '@tanstack/react-query'

import { Button } from '@/components/ui/button'
import { StatusDot, type StatusTone } from '@/components/ui/status-dot'
import { useHealth } from '@/features/health/api/get-health'
import { useReadiness } from '@/features/health/api/get-readiness'
import { errorMessage } from '@/lib/api-client'

type Row = { value: string; tone: StatusTone; detail?: string }

/** One probe's row: checking while its first answer is out, then good, or bad with the reason. */
function probeRow<T>(
  query: UseQueryResult<T>,
  good: string,
  bad: string,
  isGood: (data: T) => boolean,
): Row {
  if (query.isPending) return { value: 'checking…', tone: 'pending' }
  if (query.isError) return { value: bad, tone: 'bad', detail: errorMessage(query.error) }
  return isGood(query.data) ? { value: good, tone: 'ok' } : { value: bad, tone: 'bad' }
}

function StatusRow({ label, value, tone, detail }: Row & { label: string }) {
  return (
    <li className="flex items-baseline gap-2 text-sm">
      <StatusDot tone={tone} className="-translate-y-px" />
      <span>
        <span className="text-muted-foreground">{label}:</span>{' '}
        <span className="font-medium">{value}</span>
        {detail ? <span className="text-muted-foreground"> ({detail})</span> : null}
      </span>
    </li>
  )
}

export function HealthStatus() {
  const health = useHealth()
  const readiness = useReadiness()
  const checking = health.isFetching || readiness.isFetching

  function checkAgain() {
    void health.refetch()
    void readiness.refetch()
  }

  return (
    <div className="flex flex-col gap-4">
      <div
        role="status"
        aria-live="polite"
        aria-busy={checking}
        className="rounded-md bg-muted p-4"
      >
        <ul aria-label="Server health" className="flex flex-col gap-2">
          <StatusRow label="Server" {...probeRow(health, 'up', 'down', () => true)} />
          <StatusRow
            label="Database"
            {...probeRow(readiness, 'ready', 'not ready', (data) => data.status === 'ready')}
          />
        </ul>
      </div>
      <div className="flex justify-end">
        <Button variant="outline" onClick={checkAgain} disabled={checking}>
          Check again
        </Button>
      </div>
    </div>
  )
}
