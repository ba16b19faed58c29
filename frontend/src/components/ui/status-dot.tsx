import { cn } from '@/lib/cn'

export type StatusTone = 'ok' | 'bad' | 'pending'

const toneClass: Record<StatusTone, string> = {
  ok: 'bg-primary',
  bad: 'bg-destructive',
  pending: 'bg-muted-foreground animate-pulse',
}

/** A small decorative dot; the text next to it carries the meaning. */
export function StatusDot({ tone, className }: { tone: StatusTone; className?: string }) {
  return (
    <span
      aria-hidden="true"
      className={cn('inline-block size-2 shrink-0 rounded-full', toneClass[tone], className)}
    />
  )
}
