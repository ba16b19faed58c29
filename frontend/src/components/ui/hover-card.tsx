import { HoverCard as H } from 'radix-ui'
import type { ReactNode } from 'react'

/** A preview of what `children` (a link) leads to, on hover and on keyboard focus. */
export function HoverCard({ content, children }: { content: ReactNode; children: ReactNode }) {
  return (
    <H.Root openDelay={150} closeDelay={100}>
      <H.Trigger asChild>{children}</H.Trigger>
      <H.Portal>
        <H.Content
          sideOffset={6}
          collisionPadding={8}
          className="z-50 w-80 max-w-[calc(100vw-1rem)] rounded-lg border bg-card p-3 text-sm text-card-foreground shadow-lg outline-none"
        >
          {content}
        </H.Content>
      </H.Portal>
    </H.Root>
  )
}
