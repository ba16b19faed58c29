import type { ReactNode } from 'react'

import { Button } from '@/components/ui/button'
import { StatusDot, type StatusTone } from '@/components/ui/status-dot'
import { useHealth } from '@/features/health/hooks/use-health'

function StatusRow({
  label,
  value,
  tone,
  detail,
}: {
  label: string
  value: string
  tone: StatusTone
  detail?: ReactNode
}) {
  return (
    <li className="flex items-baseline gap-2 text-sm">
      <StatusDot tone={tone} className="translate-y-[-1px]" />
      <span>
        <span className="text-muted-foreground">{label}:</span>{' '}
        <span className="font-medium">{value}</span>
        {detail ? <span className="text-muted-foreground"> ({detail})</span> : null}
      </span>
    </li>
  )
}

export function HealthStatus() {
  const { state, refresh } = useHealth()
  const loading = state.status === 'loading'

  return (
    <div className="flex flex-col gap-4">
      <div role="status" aria-live="polite" aria-busy={loading} className="rounded-md bg-muted p-4">
        {state.status === 'loading' ? (
          <ul aria-label="Server health" className="flex flex-col gap-2">
            <StatusRow label="Server" value="checking…" tone="pending" />
            <StatusRow label="Database" value="checking…" tone="pending" />
          </ul>
        ) : state.status === 'error' ? (
          <p className="text-sm text-destructive">Could not check server health: {state.message}</p>
        ) : (
          <ul aria-label="Server health" className="flex flex-col gap-2">
            <StatusRow
              label="Server"
              value={state.data.server.up ? 'up' : 'down'}
              tone={state.data.server.up ? 'ok' : 'bad'}
              detail={state.data.server.up ? undefined : state.data.server.message}
            />
            <StatusRow
              label="Database"
              value={state.data.database.ready ? 'ready' : 'not ready'}
              tone={state.data.database.ready ? 'ok' : 'bad'}
              detail={state.data.database.ready ? undefined : state.data.database.message}
            />
          </ul>
        )}
      </div>
      <div className="flex justify-end">
        <Button onClick={refresh} disabled={loading}>
          Check again
        </Button>
      </div>
    </div>
  )
}
