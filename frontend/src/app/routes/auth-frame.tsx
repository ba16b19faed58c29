import { BookMarked } from 'lucide-react'
import type { ReactNode } from 'react'

import { ThemeToggle } from '@/app/theme-toggle'

/** The frame of the screens before the app: sign-in, first run, consent. */
export function AuthFrame({
  title,
  description,
  children,
  wide,
}: {
  title?: string
  description?: ReactNode
  children: ReactNode
  wide?: boolean
}) {
  return (
    <div className="flex min-h-svh flex-col bg-muted/40">
      <header className="flex items-center justify-between px-6 py-4">
        <span className="flex items-center gap-2 text-sm font-semibold">
          <Logo />
          Corpus
        </span>
        <ThemeToggle />
      </header>
      <main className="flex flex-1 items-start justify-center px-4 pt-[8vh] pb-16">
        <div className={wide ? 'w-full max-w-lg' : 'w-full max-w-sm'}>
          <div className="rounded-xl border bg-card p-6 shadow-sm sm:p-8">
            {title ? (
              <div className="mb-6 grid gap-1.5">
                <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
                {description ? <p className="text-sm text-muted-foreground">{description}</p> : null}
              </div>
            ) : null}
            {children}
          </div>
        </div>
      </main>
    </div>
  )
}

export function Logo() {
  return (
    <span className="flex size-7 items-center justify-center rounded-lg bg-primary text-primary-foreground">
      <BookMarked className="size-4" aria-hidden="true" />
    </span>
  )
}
