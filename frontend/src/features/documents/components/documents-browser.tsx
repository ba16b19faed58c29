import {
  ChevronLeft,
  ChevronRight,
  FileText,
  FolderOpen,
  Lock,
  MoreHorizontal,
  Pencil,
  Search,
  SearchX,
  Trash2,
  TriangleAlert,
  Upload,
  Users,
} from 'lucide-react'
import { useEffect, useState } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { EmptyState } from '@/components/ui/empty-state'
import { Input, NativeSelect } from '@/components/ui/input'
import { PageHeader } from '@/components/ui/page-header'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { useWorkspaces } from '@/lib/workspaces'

import {
  useDocuments,
  type Document,
  type DocumentFilters,
  type ListedDocument,
} from '../api/documents'
import { fullDate, mediaLabel, timeAgo } from '../lib/format'
import { DeleteDocumentDialog } from './delete-document-dialog'
import { EditDocumentDialog } from './edit-document-dialog'
import { UploadDialog } from './upload-dialog'

const FILTER_KEYS = ['workspace', 'tag', 'owner', 'visibility', 'stale', 'q'] as const

export function DocumentsBrowser({
  meId,
  canUpload,
  canEdit,
}: {
  meId: string
  canUpload: boolean
  canEdit: (document: Document) => boolean
}) {
  const [params, setParams] = useSearchParams()
  // The pages walked so far, for one set of filters: a new filter starts from the first page.
  const [paging, setPaging] = useState<{ key: string; cursors: string[] }>({ key: '', cursors: [] })
  const [uploading, setUploading] = useState(false)
  const [text, setText] = useState(params.get('q') ?? '')

  const filters: DocumentFilters = {}
  for (const key of FILTER_KEYS) {
    const value = params.get(key)
    if (value) {
      if (key === 'visibility') filters.visibility = value === 'private' ? 'private' : 'org'
      else if (key === 'owner') filters.owner = value === 'me' ? meId : value
      else if (key === 'stale') filters.stale = value === 'true'
      else filters[key] = value
    }
  }
  const filterKey = FILTER_KEYS.map((key) => params.get(key) ?? '').join('\u0000')
  const cursors = paging.key === filterKey ? paging.cursors : []
  const setCursors = (change: (current: string[]) => string[]) => {
    setPaging({ key: filterKey, cursors: change(cursors) })
  }
  const cursor = cursors.at(-1)
  const documents = useDocuments({ ...filters, ...(cursor ? { cursor } : {}) })
  const workspaces = useWorkspaces()
  const filtered = FILTER_KEYS.some((key) => params.get(key))

  // The text filter follows typing, a moment after the last key.
  useEffect(() => {
    const handle = setTimeout(() => {
      if ((params.get('q') ?? '') === text.trim()) return
      setParams(
        (current) => {
          const next = new URLSearchParams(current)
          if (text.trim()) next.set('q', text.trim())
          else next.delete('q')
          return next
        },
        { replace: true },
      )
    }, 250)
    return () => { clearTimeout(handle) }
  }, [text, params, setParams])

  function setFilter(key: (typeof FILTER_KEYS)[number], value: string) {
    setParams((current) => {
      const next = new URLSearchParams(current)
      if (value) next.set(key, value)
      else next.delete(key)
      return next
    })
  }

  const uploadButton = canUpload ? (
    <Button onClick={() => { setUploading(true) }}>
      <Upload aria-hidden="true" />
      Add documents
    </Button>
  ) : null

  return (
    <div className="grid grid-cols-1 gap-6">
      <PageHeader
        title="Documents"
        description="Everything your team and its agents can search and cite."
        actions={uploadButton}
      />

      <div className="grid grid-cols-2 gap-2 lg:grid-cols-[minmax(12rem,1fr)_repeat(5,minmax(0,10rem))]" role="group" aria-label="Filters">
        <div className="relative col-span-2 lg:col-span-1">
          <Search className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" aria-hidden="true" />
          <Input
            aria-label="Filter by title"
            placeholder="Filter by title…"
            value={text}
            onChange={(event) => { setText(event.target.value) }}
            className="pl-8"
          />
        </div>
        <NativeSelect
          aria-label="Workspace"
          value={params.get('workspace') ?? ''}
          onChange={(event) => { setFilter('workspace', event.target.value) }}
        >
          <option value="">All workspaces</option>
          {workspaces.data?.items.map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.slug}
            </option>
          ))}
        </NativeSelect>
        <Input
          aria-label="Tag"
          placeholder="Tag"
          value={params.get('tag') ?? ''}
          onChange={(event) => { setFilter('tag', event.target.value.trim().toLowerCase()) }}
        />
        <NativeSelect
          aria-label="Owner"
          value={params.get('owner') === 'me' ? 'me' : ''}
          onChange={(event) => { setFilter('owner', event.target.value) }}
        >
          <option value="">Anyone’s</option>
          <option value="me">Mine</option>
        </NativeSelect>
        <NativeSelect
          aria-label="Visibility"
          value={params.get('visibility') ?? ''}
          onChange={(event) => { setFilter('visibility', event.target.value) }}
        >
          <option value="">Any visibility</option>
          <option value="org">Everyone</option>
          <option value="private">Private</option>
        </NativeSelect>
        <NativeSelect
          aria-label="Freshness"
          value={params.get('stale') ?? ''}
          onChange={(event) => { setFilter('stale', event.target.value) }}
        >
          <option value="">Any freshness</option>
          <option value="true">May be stale</option>
          <option value="false">Not flagged</option>
        </NativeSelect>
      </div>

      {documents.isError ? (
        <Alert variant="destructive">
          <div className="grid gap-2">
            <p>Could not load the documents: {errorMessage(documents.error)}</p>
            <div>
              <Button variant="outline" size="sm" onClick={() => void documents.refetch()}>
                Try again
              </Button>
            </div>
          </div>
        </Alert>
      ) : documents.isPending ? (
        <TableSkeleton />
      ) : documents.data.items.length === 0 && !cursor ? (
        filtered ? (
          <EmptyState icon={SearchX} title="No document matches these filters">
            <Button variant="link" onClick={() => { setText(''); setParams({}) }}>
              Clear the filters
            </Button>
          </EmptyState>
        ) : (
          <EmptyState icon={FolderOpen} title="No documents yet" action={uploadButton}>
            <p>
              Documents live in <strong className="font-medium text-foreground">workspaces</strong>:
              a team’s runbooks, a vendor’s manuals, an open-source project’s docs. Each has its
              own license and audience, and agents are routed to the ones their persona needs.
            </p>
            {canUpload ? (
              <p className="mt-2">Drop Markdown, PDF or Word files to start.</p>
            ) : (
              <p className="mt-2">An editor adds documents; you can search them once they do.</p>
            )}
          </EmptyState>
        )
      ) : (
        <>
          <DocumentsTable
            documents={documents.data.items}
            meId={meId}
            canEdit={canEdit}
            refreshing={documents.isPlaceholderData}
          />
          <div className="flex items-center justify-between gap-2 text-sm text-muted-foreground">
            <span>
              Page {cursors.length + 1} · {documents.data.items.length} shown
            </span>
            <div className="flex gap-2">
              <Button
                variant="outline"
                size="sm"
                disabled={cursors.length === 0}
                onClick={() => { setCursors((c) => c.slice(0, -1)) }}
              >
                <ChevronLeft aria-hidden="true" />
                Previous
              </Button>
              <Button
                variant="outline"
                size="sm"
                disabled={!documents.data.next_cursor}
                onClick={() => {
                  const next = documents.data.next_cursor
                  if (next) setCursors((c) => [...c, next])
                }}
              >
                Next
                <ChevronRight aria-hidden="true" />
              </Button>
            </div>
          </div>
        </>
      )}
      <UploadDialog
        open={uploading}
        onOpenChange={setUploading}
        defaultWorkspace={params.get('workspace') ?? undefined}
      />
    </div>
  )
}

function DocumentsTable({
  documents,
  meId,
  canEdit,
  refreshing,
}: {
  documents: ListedDocument[]
  meId: string
  canEdit: (document: Document) => boolean
  refreshing: boolean
}) {
  const navigate = useNavigate()
  const [editing, setEditing] = useState<Document | null>(null)
  const [deleting, setDeleting] = useState<Document | null>(null)
  return (
    <div className="relative overflow-x-auto rounded-xl border bg-card" aria-busy={refreshing}>
      <table className="w-full text-sm sm:min-w-[40rem]">
        <thead className="border-b bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            <th scope="col" className="w-full px-4 py-2.5 font-medium sm:w-[45%]">Title</th>
            <th scope="col" className="hidden px-3 py-2.5 font-medium sm:table-cell">Workspace</th>
            <th scope="col" className="hidden px-3 py-2.5 font-medium whitespace-nowrap md:table-cell">Tags</th>
            <th scope="col" className="hidden px-3 py-2.5 font-medium lg:table-cell">Owner</th>
            <th scope="col" className="hidden px-3 py-2.5 text-right font-medium sm:table-cell">Chunks</th>
            <th scope="col" className="hidden px-3 py-2.5 font-medium sm:table-cell">Updated</th>
            <th scope="col" className="w-10 px-2 py-2.5"><span className="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody className="divide-y">
          {documents.map((doc) => (
            <tr key={doc.id} className="group hover:bg-muted/40">
              <td className="max-w-0 px-4 py-2.5">
                <Link to={`/documents/${doc.id}`} className="flex min-w-0 items-center gap-2 font-medium hover:underline">
                  <span className="inline-flex h-5 min-w-9 shrink-0 items-center justify-center rounded border bg-background font-mono text-[10px] text-muted-foreground">
                    {mediaLabel(doc.media_type, doc.source)}
                  </span>
                  <span className="truncate">{doc.title}</span>
                  {doc.visibility === 'private' ? (
                    <Lock className="size-3.5 shrink-0 text-muted-foreground" aria-label="Private" />
                  ) : null}
                  {doc.stale ? (
                    <Badge variant="destructive" title="Code it names changed in a later commit">
                      <TriangleAlert className="size-3" aria-hidden="true" />
                      May be stale
                    </Badge>
                  ) : null}
                </Link>
                <p className="mt-0.5 truncate pl-11 text-xs text-muted-foreground sm:hidden">
                  {doc.workspace} · {timeAgo(doc.updated_at)}
                </p>
              </td>
              <td className="hidden px-3 py-2.5 sm:table-cell"><Badge variant="outline">{doc.workspace}</Badge></td>
              <td className="hidden px-3 py-2.5 md:table-cell">
                <div className="flex max-w-56 flex-wrap gap-1">
                  {doc.tags.slice(0, 3).map((tag) => (
                    <Badge key={tag} variant="default">#{tag}</Badge>
                  ))}
                  {doc.tags.length > 3 ? <Badge>+{doc.tags.length - 3}</Badge> : null}
                </div>
              </td>
              <td className="hidden px-3 py-2.5 whitespace-nowrap text-muted-foreground lg:table-cell">
                {doc.owner_id === meId ? 'You' : doc.owner_id ? (
                  <span className="inline-flex items-center gap-1"><Users className="size-3.5" aria-hidden="true" />Teammate</span>
                ) : 'Imported'}
              </td>
              <td className="hidden px-3 py-2.5 text-right font-mono text-xs tabular-nums sm:table-cell">{doc.chunk_count}</td>
              <td className="hidden px-3 py-2.5 whitespace-nowrap text-muted-foreground sm:table-cell" title={fullDate(doc.updated_at)}>
                {timeAgo(doc.updated_at)}
              </td>
              <td className="px-2 py-1.5">
                <DropdownMenu>
                  <DropdownMenuTrigger asChild>
                    <Button variant="ghost" size="icon-sm" aria-label={`Actions for ${doc.title}`}>
                      <MoreHorizontal aria-hidden="true" />
                    </Button>
                  </DropdownMenuTrigger>
                  <DropdownMenuContent align="end">
                    <DropdownMenuItem onSelect={() => { void navigate(`/documents/${doc.id}`) }}>
                      <FileText aria-hidden="true" />
                      Open
                    </DropdownMenuItem>
                    {canEdit(doc) ? (
                      <>
                        <DropdownMenuItem onSelect={() => { setEditing(doc) }}>
                          <Pencil aria-hidden="true" />
                          Edit
                        </DropdownMenuItem>
                        <DropdownMenuSeparator />
                        <DropdownMenuItem destructive onSelect={() => { setDeleting(doc) }}>
                          <Trash2 aria-hidden="true" />
                          Delete
                        </DropdownMenuItem>
                      </>
                    ) : null}
                  </DropdownMenuContent>
                </DropdownMenu>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {editing ? (
        <EditDocumentDialog id={editing.id} open onOpenChange={(open) => { if (!open) setEditing(null) }} />
      ) : null}
      {deleting ? (
        <DeleteDocumentDialog document={deleting} open onOpenChange={(open) => { if (!open) setDeleting(null) }} />
      ) : null}
    </div>
  )
}

function TableSkeleton() {
  return (
    <div className="grid gap-px overflow-hidden rounded-xl border" aria-busy="true" aria-label="Loading documents">
      {Array.from({ length: 6 }, (_, i) => (
        <div key={i} className="flex items-center gap-4 bg-card px-4 py-3">
          <Skeleton className="h-4 flex-1" />
          <Skeleton className="h-4 w-20" />
          <Skeleton className="h-4 w-16" />
          <Skeleton className="h-4 w-12" />
        </div>
      ))}
    </div>
  )
}
