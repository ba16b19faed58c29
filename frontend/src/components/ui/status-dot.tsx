import { cva, type VariantProps } from 'class-variance-authority'

import { cn } from '@/lib/cn'

const statusDotVariants = cva('inline-block size-2 shrink-0 rounded-full', {
  variants: {
    tone: {
      ok: 'bg-primary',
      bad: 'bg-destructive',
      pending: 'animate-pulse bg-muted-foreground',
    },
  },
})

export type StatusTone = NonNullable<VariantProps<typeof statusDotVariants>['tone']>

/** A small decorative dot; the text next to it carries the meaning. */
export function StatusDot({ tone, className }: { tone: StatusTone; className?: string }) {
  return <span aria-hidden="true" className={cn(statusDotVariants({ tone }), className)} />
}
