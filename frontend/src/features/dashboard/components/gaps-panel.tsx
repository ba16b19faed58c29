import { CircleCheck, FilePlus2, X } from 'lucide-react'
import { toast } from 'sonner'

import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useDismissGap, useGaps, type Gap } from '../api/dashboard'
import { ago } from './panels'

/** A first draft of the missing document: the question as its title and an outline to fill. */
export function outline(gap: Gap): { title: string; content: string } {
  return {
    title: gap.question,
    content: `# ${gap.question}\n\n## Short answer\n\nThe answer in a sentence or two.\n\n## Details\n\nSteps, examples and the reasons behind them.\n\n## See also\n\nRelated documents.\n`,
  }
}

/** The questions the corpus could not answer, near-duplicates grouped, most asked first:
 *  each one written up (`onWrite` opens the upload) or dismissed. */
export function GapsPanel({ onWrite }: { onWrite: (gap: Gap) => void }) {
  const gaps = useGaps({ enabled: true })
  const dismiss = useDismissGap()
  return (
    <Card className="min-w-0" aria-labelledby="gaps-title">
      <CardHeader>
        <CardTitle id="gaps-title">Documentation gaps</CardTitle>
        <CardDescription>Questions the corpus could not answer, the most asked first</CardDescription>
      </CardHeader>
      <CardContent>
        {gaps.isPending ? (
          <div className="grid gap-2" aria-busy="true" aria-label="Loading gaps">
            {[0, 1, 2].map((i) => <Skeleton key={i} className="h-12" />)}
          </div>
        ) : gaps.isError ? (
          <p className="text-sm text-destructive">{errorMessage(gaps.error)}</p>
        ) : gaps.data.items.length === 0 ? (
          <p className="flex items-center gap-2 text-sm text-muted-foreground">
            <CircleCheck className="size-4 text-success" aria-hidden="true" />
            No gaps: every recent question found something.
          </p>
        ) : (
          <ol className="grid gap-2" aria-label="Gaps">
            {gaps.data.items.map((gap) => (
              <li key={gap.question} className="grid gap-2 rounded-lg border p-3 sm:flex sm:items-start sm:justify-between" data-testid="gap">
                <div className="grid min-w-0 gap-1">
                  <p className="font-medium break-words">{gap.question}</p>
                  <p className="text-xs text-muted-foreground">
                    Asked {gap.count} {gap.count === 1 ? 'time' : 'times'} by {gap.people}{' '}
                    {gap.people === 1 ? 'person' : 'people'} · last {ago(gap.last_asked_at)}
                  </p>
                  {gap.examples.length > 1 ? (
                    <p className="truncate text-xs text-muted-foreground" title={gap.examples.join('\n')}>
                      Also: {gap.examples.slice(1).join(' · ')}
                    </p>
                  ) : null}
                </div>
                <div className="flex shrink-0 gap-1.5">
                  <Button size="sm" variant="outline" onClick={() => { onWrite(gap) }}>
                    <FilePlus2 aria-hidden="true" />
                    Write this doc
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    disabled={dismiss.isPending}
                    aria-label={`Dismiss “${gap.question}”`}
                    onClick={() => {
                      dismiss.mutate(gap.question, {
                        onSuccess: () => toast.success('Gap dismissed'),
                        onError: (error) => toast.error(errorMessage(error)),
                      })
                    }}
                  >
                    <X aria-hidden="true" />
                    Dismiss
                  </Button>
                </div>
              </li>
            ))}
          </ol>
        )}
      </CardContent>
    </Card>
  )
}
