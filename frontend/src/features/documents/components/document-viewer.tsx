import {
  ChevronRight,
  Download,
  FileText,
  Link2,
  ListTree,
  Lock,
  Scissors,
  Sparkles,
  Users,
} from 'lucide-react'
import { useEffect, useId, useMemo, useRef, useState, type MouseEvent, type ReactNode } from 'react'
import { Link, useLocation, useNavigate } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { buttonVariants } from '@/components/ui/button'
import { Skeleton } from '@/components/ui/skeleton'
import { Switch } from '@/components/ui/switch'
import { ApiError, errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'

import {
  useBacklinks,
  useChunks,
  useDocument,
  useDocumentLinks,
  useRelated,
  type DocumentWithContent,
} from '../api/documents'
import { fullDate, timeAgo } from '../lib/format'
import { linkKey, placeChunks, renderMarkdown, type ResolvedLinks, type TocEntry } from '../lib/markdown'
import { DocumentActions } from './document-actions'
import { MarkdownTree } from './markdown'

export function DocumentViewer({
  id,
  canEdit,
  actions,
  onDeleted,
}: {
  id: string
  canEdit: (document: DocumentWithContent) => boolean
  actions?: ReactNode
  onDeleted: () => void
}) {
  const document = useDocument(id)
  const chunks = useChunks(id)
  const outgoing = useDocumentLinks(id)
  const [seams, setSeams] = useState(false)
  const seamsId = useId()
  const navigate = useNavigate()

  const links = useMemo<ResolvedLinks>(
    () => new Map((outgoing.data ?? []).map((link) => [linkKey(link.href), link.document_id ?? null])),
    [outgoing.data],
  )
  const rendered = useMemo(() => {
    if (!document.data) return null
    const placed = chunks.data ? placeChunks(document.data.content, chunks.data) : []
    return renderMarkdown(document.data.content, { chunks: placed, seams, title: document.data.title, links })
  }, [document.data, chunks.data, seams, links])

  useChunkTarget(rendered !== null && chunks.isSuccess)

  /** A link to another document stays in the app (no reload); any other goes as it would. */
  function followInternal(event: MouseEvent<HTMLDivElement>) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const anchor = (event.target as HTMLElement).closest('a')
    const href = anchor?.getAttribute('href')
    if (!href?.startsWith('/documents/')) return
    event.preventDefault()
    void navigate(href)
  }

  if (document.isPending) return <ViewerSkeleton />
  if (document.isError) {
    const missing = document.error instanceof ApiError && document.error.status === 404
    return (
      <Alert variant="destructive">
        <div className="grid gap-1">
          <p className="font-medium">
            {missing ? 'This document does not exist, or you may not see it.' : 'Could not load the document.'}
          </p>
          {missing ? null : <p>{errorMessage(document.error)}</p>}
          <Link to="/documents" className="text-sm underline underline-offset-4">
            Back to documents
          </Link>
        </div>
      </Alert>
    )
  }

  const doc = document.data
  return (
    <div className="grid min-w-0 grid-cols-1 gap-6 xl:grid-cols-[13rem_minmax(0,1fr)_16rem] xl:gap-10">
      <aside className="hidden xl:block" aria-label="Table of contents">
        <div className="sticky top-20">
          <TableOfContents toc={rendered?.toc ?? []} />
        </div>
      </aside>

      <article className="min-w-0" aria-labelledby="document-title">
        <nav aria-label="Breadcrumb" className="mb-2 flex items-center gap-1 text-xs text-muted-foreground">
          <Link to="/documents" className="hover:text-foreground">
            Documents
          </Link>
          <ChevronRight className="size-3" aria-hidden="true" />
          <Link
            to={`/documents?workspace=${encodeURIComponent(doc.workspace)}`}
            className="hover:text-foreground"
          >
            {doc.workspace}
          </Link>
        </nav>
        <header className="grid gap-3 border-b pb-5">
          <h1 id="document-title" className="text-2xl font-semibold tracking-tight text-balance break-words">
            {doc.title}
          </h1>
          <div className="flex flex-wrap items-center gap-2 text-xs text-muted-foreground">
            <Badge variant="outline">{doc.workspace}</Badge>
            <Badge variant="secondary">
              {doc.visibility === 'private' ? (
                <Lock className="size-3" aria-hidden="true" />
              ) : (
                <Users className="size-3" aria-hidden="true" />
              )}
              {doc.visibility === 'private' ? 'Private' : 'Everyone'}
            </Badge>
            {doc.tags.map((tag) => (
              <Link key={tag} to={`/documents?tag=${encodeURIComponent(tag)}`}>
                <Badge variant="default">#{tag}</Badge>
              </Link>
            ))}
            <span title={fullDate(doc.updated_at)}>
              v{doc.version} · updated {timeAgo(doc.updated_at)}
            </span>
            <span>· {doc.chunk_count} chunks</span>
          </div>
          <div className="flex flex-wrap items-center justify-between gap-3">
            <label htmlFor={seamsId} className="flex items-center gap-2 text-sm">
              <Switch id={seamsId} checked={seams} onCheckedChange={setSeams} />
              <Scissors className="size-4 text-muted-foreground" aria-hidden="true" />
              Chunk seams
            </label>
            <div className="flex flex-wrap items-center gap-2">
              {actions}
              {doc.has_original ? (
                // A plain link: the session cookie goes with it, and the browser saves the file.
                <a
                  href={`/api/documents/${doc.id}/original`}
                  download
                  className={buttonVariants({ variant: 'outline', size: 'sm' })}
                >
                  <Download className="size-4" aria-hidden="true" />
                  Original PDF
                </a>
              ) : null}
              {canEdit(doc) ? <DocumentActions document={doc} onDeleted={onDeleted} /> : null}
            </div>
          </div>
        </header>
        {chunks.isError ? (
          <Alert variant="destructive" className="mt-4">
            Could not load the chunks: {errorMessage(chunks.error)}
          </Alert>
        ) : null}
        {rendered && rendered.toc.length > 1 ? (
          <details className="mt-4 rounded-lg border px-3 py-2 text-sm xl:hidden">
            <summary className="cursor-pointer font-medium text-muted-foreground">On this page</summary>
            <div className="mt-2">
              <TableOfContents toc={rendered.toc} compact />
            </div>
          </details>
        ) : null}
        {/* The document's links are followed here, in the app; each stays a focusable link. */}
        <div
          className={cn('prose-doc mt-6', seams && 'seams-on')}
          data-testid="document-body"
          onClick={followInternal}
        >
          {rendered ? <MarkdownTree tree={rendered.tree} /> : null}
        </div>
      </article>

      <aside className="grid min-w-0 content-start gap-6" aria-label="Around this document">
        <RelatedDocuments id={id} />
        <Backlinks id={id} />
        <Details document={doc} />
      </aside>
    </div>
  )
}

/** Scroll to and light up the chunk a `#chunk-{id}` address names, once it is drawn; scroll to
 *  the heading a `#h-…` address names (a link from another document). */
function useChunkTarget(ready: boolean) {
  const { hash } = useLocation()
  const last = useRef<Element | null>(null)
  useEffect(() => {
    if (!ready) return
    last.current?.removeAttribute('data-active')
    if (hash.startsWith('#h-')) {
      document.getElementById(decodeURIComponent(hash.slice(1)))?.scrollIntoView({ block: 'start' })
      return
    }
    if (!hash.startsWith('#chunk-')) return
    const target = document.getElementById(decodeURIComponent(hash.slice(1)))
    if (!target) return
    target.setAttribute('data-active', 'true')
    target.scrollIntoView({ block: 'start' })
    last.current = target
  }, [hash, ready])
}

function TableOfContents({ toc, compact = false }: { toc: TocEntry[]; compact?: boolean }) {
  if (toc.length === 0) return null
  const top = Math.min(...toc.map((entry) => entry.depth))
  return (
    <nav aria-label={compact ? 'Contents (compact)' : 'Contents'} className="grid gap-2">
      {compact ? null : (
        <p className="flex items-center gap-1.5 text-xs font-medium text-muted-foreground">
          <ListTree className="size-3.5" aria-hidden="true" />
          On this page
        </p>
      )}
      <ul className="grid gap-1 border-l text-sm">
        {toc.map((entry) => (
          <li key={entry.id} style={{ paddingLeft: `${(entry.depth - top) * 0.75 + 0.75}rem` }}>
            <a
              href={`#${entry.id}`}
              className="-ml-px block truncate border-l border-transparent py-0.5 text-muted-foreground hover:border-foreground hover:text-foreground"
              title={entry.text}
            >
              {entry.text}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}

function RailSection({
  icon: Icon,
  title,
  children,
}: {
  icon: typeof FileText
  title: string
  children: ReactNode
}) {
  return (
    <section className="grid gap-2" aria-label={title}>
      <h2 className="flex items-center gap-1.5 text-xs font-medium text-muted-foreground">
        <Icon className="size-3.5" aria-hidden="true" />
        {title}
      </h2>
      {children}
    </section>
  )
}

function RailSkeleton() {
  return (
    <div className="grid gap-2" aria-hidden="true">
      <Skeleton className="h-4 w-5/6" />
      <Skeleton className="h-4 w-4/6" />
    </div>
  )
}

function RelatedDocuments({ id }: { id: string }) {
  const related = useRelated(id)
  return (
    <RailSection icon={Sparkles} title="Related documents">
      {related.isPending ? (
        <RailSkeleton />
      ) : related.isError ? (
        <p className="text-sm text-destructive">{errorMessage(related.error)}</p>
      ) : related.data.length === 0 ? (
        <p className="text-sm text-muted-foreground">Nothing else close yet.</p>
      ) : (
        <ul className="grid gap-1">
          {related.data.map((item) => (
            <li key={item.id}>
              <Link
                to={`/documents/${item.id}`}
                className="group flex items-center justify-between gap-2 rounded-md px-2 py-1 text-sm hover:bg-muted"
              >
                <span className="truncate">{item.title}</span>
                <span className="shrink-0 font-mono text-xs text-muted-foreground" title="Similarity of the documents’ chunk centroids">
                  {item.similarity.toFixed(2)}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </RailSection>
  )
}

function Backlinks({ id }: { id: string }) {
  const backlinks = useBacklinks(id)
  return (
    <RailSection icon={Link2} title="Linked from">
      {backlinks.isPending ? (
        <RailSkeleton />
      ) : backlinks.isError ? (
        <p className="text-sm text-destructive">{errorMessage(backlinks.error)}</p>
      ) : backlinks.data.length === 0 ? (
        <p className="text-sm text-muted-foreground">No document links here yet.</p>
      ) : (
        <ul className="grid gap-1">
          {backlinks.data.map((item) => (
            <li key={item.id}>
              <Link
                to={`/documents/${item.id}`}
                className="flex items-center gap-2 rounded-md px-2 py-1 text-sm hover:bg-muted"
              >
                <FileText className="size-3.5 shrink-0 text-muted-foreground" aria-hidden="true" />
                <span className="truncate">{item.title}</span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </RailSection>
  )
}

function Details({ document }: { document: DocumentWithContent }) {
  return (
    <RailSection icon={FileText} title="Details">
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
        <dt className="text-muted-foreground">Source</dt>
        <dd className="truncate" title={document.source ?? undefined}>
          {document.source ?? 'typed in'}
        </dd>
        <dt className="text-muted-foreground">Type</dt>
        <dd className="truncate font-mono text-xs leading-5">{document.media_type}</dd>
        <dt className="text-muted-foreground">Created</dt>
        <dd>{fullDate(document.created_at)}</dd>
      </dl>
    </RailSection>
  )
}

function ViewerSkeleton() {
  return (
    <div className="mx-auto grid max-w-3xl gap-4" aria-busy="true" aria-label="Loading the document">
      <Skeleton className="h-4 w-40" />
      <Skeleton className="h-8 w-2/3" />
      <Skeleton className="h-4 w-1/2" />
      <div className="mt-4 grid gap-2">
        {Array.from({ length: 8 }, (_, i) => (
          <Skeleton key={i} className="h-4" style={{ width: `${90 - ((i * 7) % 30)}%` }} />
        ))}
      </div>
    </div>
  )
}
