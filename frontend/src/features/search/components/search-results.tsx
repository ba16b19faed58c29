import { ChevronRight, FileSearch, SearchX } from 'lucide-react'
import { Fragment, useState, type SubmitEvent } from 'react'
import { Link, useSearchParams } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Input, NativeSelect } from '@/components/ui/input'
import { PageHeader } from '@/components/ui/page-header'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'
import { useWorkspaces } from '@/lib/workspaces'

import { useSearch, type SearchHit, type SearchMode } from '../api/search'
import { excerpt, highlight } from '../lib/highlight'
import { RankBadges, WORDS } from './rank-badges'

const MODES: { value: SearchMode; label: string; help: string }[] = [
  { value: 'hybrid', label: WORDS.hybrid, help: 'Passages near in meaning and passages with the words, combined (hybrid)' },
  { value: 'dense', label: WORDS.dense, help: 'Passages near in meaning, by their embeddings (dense)' },
  { value: 'keyword', label: WORDS.keyword, help: 'Passages with the question’s words (keyword, BM25)' },
]

function modeOf(value: string | null): SearchMode {
  return value === 'dense' || value === 'keyword' ? value : 'hybrid'
}

export function SearchResults() {
  const [params, setParams] = useSearchParams()
  const query = params.get('q') ?? ''
  const mode = modeOf(params.get('mode'))
  const workspace = params.get('workspace') ?? ''
  const tag = params.get('tag') ?? ''
  // The box shows what was searched until the person types: a new search (from the top
  // bar, say) replaces an edit that was not submitted.
  const [draft, setDraft] = useState({ for: query, text: query })
  const text = draft.for === query ? draft.text : query

  const search = useSearch({ query, mode, ...(workspace ? { workspace } : {}), ...(tag ? { tag } : {}) })
  const workspaces = useWorkspaces()

  function set(key: string, value: string) {
    setParams((current) => {
      const next = new URLSearchParams(current)
      if (value) next.set(key, value)
      else next.delete(key)
      return next
    })
  }

  function submit(event: SubmitEvent) {
    event.preventDefault()
    set('q', text.trim())
  }

  return (
    // The pages' one frame (max-w-6xl, as Documents and the dashboard), its column kept to a
    // reading width, so that every page's title starts at the same place.
    <div className="mx-auto grid max-w-6xl gap-5 *:max-w-4xl">
      <PageHeader
        title="Search"
        description="Passages from every workspace you may see, found by meaning and by exact words."
      />
      <form role="search" onSubmit={submit} className="flex gap-2">
        <Input
          aria-label="Search the corpus"
          placeholder="Search by meaning or for exact terms…"
          value={text}
          onChange={(event) => { setDraft({ for: query, text: event.target.value }) }}
          className="h-10 text-base"
          autoFocus={!query}
        />
        <Button type="submit" size="lg">Search</Button>
      </form>
      <div className="flex flex-wrap items-center gap-2">
        <div role="radiogroup" aria-label="Mode" className="inline-flex rounded-lg bg-muted p-1">
          {MODES.map((option) => (
            <button
              key={option.value}
              type="button"
              role="radio"
              aria-checked={mode === option.value}
              title={option.help}
              onClick={() => { set('mode', option.value === 'hybrid' ? '' : option.value) }}
              className={cn(
                'rounded-md px-3 py-1 text-sm font-medium transition-colors focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                mode === option.value ? 'bg-background shadow-xs' : 'text-muted-foreground hover:text-foreground',
              )}
            >
              {option.label}
            </button>
          ))}
        </div>
        <NativeSelect
          aria-label="Workspace"
          value={workspace}
          onChange={(event) => { set('workspace', event.target.value) }}
          className="w-auto"
        >
          <option value="">All workspaces</option>
          {workspaces.data?.items.map((w) => (
            <option key={w.slug} value={w.slug}>{w.slug}</option>
          ))}
        </NativeSelect>
        <Input
          key={tag}
          aria-label="Tag"
          placeholder="Tag"
          defaultValue={tag}
          onBlur={(event) => { set('tag', event.target.value.trim().toLowerCase()) }}
          onKeyDown={(event) => {
            if (event.key === 'Enter') set('tag', event.currentTarget.value.trim().toLowerCase())
          }}
          className="w-32"
        />
        {search.data && query ? (
          // No time shown: the server reports took_ms as 0, since a search's duration could tell
          // what others' private documents hold (docs/SECURITY.md).
          <span className="ml-auto text-xs text-muted-foreground" aria-live="polite">
            {search.data.hits.length} {search.data.hits.length === 1 ? 'hit' : 'hits'}
          </span>
        ) : null}
      </div>

      {!query ? (
        <EmptyState icon={FileSearch} title="Search what your team knows">
          Search finds passages by meaning and by their exact words, and shows how each ranked on
          both; a document’s best passage comes first, with its other matches under it.
        </EmptyState>
      ) : search.isError ? (
        <Alert variant="destructive">Search failed: {errorMessage(search.error)}</Alert>
      ) : search.isPending ? (
        <div className="grid gap-3" aria-busy="true" aria-label="Searching">
          {[0, 1, 2].map((i) => (
            <div key={i} className="grid gap-2 rounded-xl border p-4">
              <Skeleton className="h-4 w-1/3" />
              <Skeleton className="h-3 w-full" />
              <Skeleton className="h-3 w-5/6" />
            </div>
          ))}
        </div>
      ) : search.data.hits.length === 0 ? (
        workspace || tag ? (
          <EmptyState icon={SearchX} title="No document matches these filters">
            Nothing in {workspace ? `the workspace “${workspace}”` : 'any workspace'}
            {tag ? ` tagged “${tag}”` : ''} answers “{query}”. Try without the filters.
          </EmptyState>
        ) : (
          <EmptyState icon={SearchX} title="Nothing relevant found">
            No passage came close enough to “{query}” to be worth showing — rather than show
            weak matches, Corpus shows none. The question is noted as a documentation gap. Try
            other words or another mode.
          </EmptyState>
        )
      ) : (
        <ol className={cn('grid gap-3', search.isPlaceholderData && 'opacity-60')} aria-label="Results">
          {byDocument(search.data.hits).map(([best, ...more]) => (
            <li key={best.chunk_id}>
              <Hit hit={best} more={more} />
            </li>
          ))}
        </ol>
      )}
    </div>
  )
}

/** The hits grouped by document, each group in the order of its best hit. */
export function byDocument(hits: SearchHit[]): [SearchHit, ...SearchHit[]][] {
  const groups = new Map<string, [SearchHit, ...SearchHit[]]>()
  for (const hit of hits) {
    const group = groups.get(hit.document_id)
    if (group) group.push(hit)
    else groups.set(hit.document_id, [hit])
  }
  return [...groups.values()]
}

function Snippet({ hit }: { hit: SearchHit }) {
  return (
    <>
      {highlight(excerpt(hit.text, hit.matched_terms), hit.matched_terms).map((part, i) =>
        part.match ? <mark key={i}>{part.text}</mark> : <Fragment key={i}>{part.text}</Fragment>,
      )}
    </>
  )
}

function Hit({ hit, more }: { hit: SearchHit; more: SearchHit[] }) {
  const oneHalf = hit.vec_rank === null || hit.kw_rank === null
  return (
    <article
      className="grid gap-2 rounded-xl border bg-card p-4 transition-colors hover:border-foreground/20"
      data-testid="search-hit"
    >
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div className="grid min-w-0 gap-1">
          <h2 className="text-base font-semibold break-words">
            <Link to={`/documents/${hit.document_id}#chunk-${hit.chunk_id}`} className="hover:underline">
              {hit.title}
            </Link>
          </h2>
          <div className="flex min-w-0 flex-wrap items-center gap-1 text-xs text-muted-foreground">
            <Badge variant="outline">{hit.workspace}</Badge>
            {hit.heading_path.map((heading, i) => (
              <Fragment key={i}>
                {i > 0 ? <ChevronRight className="size-3" aria-hidden="true" /> : null}
                <span className="truncate">{heading}</span>
              </Fragment>
            ))}
            {hit.page ? <span className="shrink-0">· p. {hit.page}</span> : null}
          </div>
        </div>
        <div className="flex items-center gap-2">
          {oneHalf ? (
            <span className="text-[11px] text-muted-foreground">
              {hit.vec_rank === null ? 'by its words only' : 'by meaning only'}
            </span>
          ) : null}
          <RankBadges hit={hit} />
        </div>
      </div>
      <p className="text-sm leading-6 break-words text-muted-foreground" data-testid="snippet">
        <Snippet hit={hit} />
      </p>
      {more.length ? (
        <details className="group text-sm">
          <summary className="flex cursor-pointer list-none items-center gap-1 text-xs font-medium text-muted-foreground select-none hover:text-foreground">
            <ChevronRight className="size-3.5 transition-transform group-open:rotate-90" aria-hidden="true" />
            {more.length} more in this document
          </summary>
          <ul className="mt-2 grid gap-2 border-l pl-3">
            {more.map((other) => (
              <li key={other.chunk_id} className="grid min-w-0 gap-0.5">
                <Link
                  to={`/documents/${other.document_id}#chunk-${other.chunk_id}`}
                  className="truncate text-xs font-medium hover:underline"
                >
                  {other.heading_path.join(' › ') || other.title}
                </Link>
                <p className="line-clamp-2 text-xs leading-5 break-words text-muted-foreground">
                  <Snippet hit={other} />
                </p>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </article>
  )
}
