import { ArrowRight, FileText, Search } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { Link, useNavigate, useOutletContext } from 'react-router'

import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Input } from '@/components/ui/input'
import { Skeleton } from '@/components/ui/skeleton'
import type { Me } from '@/features/auth/api/get-me'
import { useDocuments } from '@/features/documents/api/documents'
import { timeAgo } from '@/features/documents/lib/format'
import { errorMessage } from '@/lib/api-client'
import { usePageTitle } from '@/lib/page-title'

export function HomeRoute() {
  usePageTitle('Home')
  const me = useOutletContext<Me>()
  const navigate = useNavigate()
  const [query, setQuery] = useState('')
  const recent = useDocuments({})

  function submit(event: SubmitEvent) {
    event.preventDefault()
    if (query.trim()) void navigate(`/search?q=${encodeURIComponent(query.trim())}`)
  }

  return (
    <div className="mx-auto grid max-w-3xl grid-cols-1 gap-10 pt-4 md:pt-10">
      <section className="grid gap-4 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">
          Good to see you{me.display_name ? `, ${me.display_name.split(' ')[0] ?? ''}` : ''}
        </h1>
        <p className="text-sm text-muted-foreground">
          Search what your team and its agents know, by meaning or by exact words,{' '}
          <Link to="/chat" className="text-primary underline underline-offset-4">ask it in a chat</Link>, or see it
          all on the{' '}
          <Link to="/dashboard" className="text-primary underline underline-offset-4">dashboard</Link>.
        </p>
        <form role="search" onSubmit={submit} className="relative mx-auto w-full max-w-xl">
          <Search className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-muted-foreground" aria-hidden="true" />
          <Input
            aria-label="Search the corpus"
            placeholder="How do we roll back a deploy?"
            value={query}
            onChange={(event) => { setQuery(event.target.value) }}
            className="h-11 rounded-xl pr-24 pl-9 text-base shadow-sm"
          />
          <Button type="submit" className="absolute top-1/2 right-1.5 -translate-y-1/2">
            Search
          </Button>
        </form>
      </section>

      <section className="grid grid-cols-1 gap-3" aria-labelledby="recent-heading">
        <div className="flex items-center justify-between">
          <h2 id="recent-heading" className="text-sm font-semibold">Recently changed</h2>
          <Link to="/documents" className="flex items-center gap-1 text-sm text-muted-foreground hover:text-foreground">
            All documents <ArrowRight className="size-3.5" aria-hidden="true" />
          </Link>
        </div>
        {recent.isPending ? (
          <div className="grid gap-2" aria-busy="true" aria-label="Loading recent documents">
            {[0, 1, 2].map((i) => <Skeleton key={i} className="h-12" />)}
          </div>
        ) : recent.isError ? (
          <p className="text-sm text-destructive">{errorMessage(recent.error)}</p>
        ) : recent.data.items.length === 0 ? (
          <EmptyState icon={FileText} title="Nothing here yet">
            Documents your team adds show up here. <Link to="/documents" className="text-primary underline underline-offset-4">Go to Documents</Link>
          </EmptyState>
        ) : (
          <ul className="divide-y rounded-xl border bg-card">
            {recent.data.items.slice(0, 6).map((doc) => (
              <li key={doc.id}>
                <Link to={`/documents/${doc.id}`} className="flex items-center gap-3 px-4 py-3 hover:bg-muted/50">
                  <FileText className="size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
                  <span className="min-w-0 flex-1 truncate text-sm font-medium">{doc.title}</span>
                  <Badge variant="outline" className="hidden sm:inline-flex">{doc.workspace}</Badge>
                  <span className="shrink-0 text-xs text-muted-foreground">{timeAgo(doc.updated_at)}</span>
                </Link>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
