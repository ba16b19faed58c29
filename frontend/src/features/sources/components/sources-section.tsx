import { FolderGit2, Pause, Pencil, Play, RefreshCw, Trash2 } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Input, NativeSelect } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { useWorkspaces } from '@/lib/workspaces'

import {
  useCreateSource,
  useDeleteSource,
  useSourceRuns,
  useSources,
  useSyncSource,
  useUpdateSource,
  type Source,
  type SourceCreate,
  type SourceRun,
  type SourceUpdate,
} from '../api/sources'

function globs(text: string) {
  return text.split(',').map((glob) => glob.trim()).filter(Boolean)
}

function report(run: SourceRun) {
  return `${run.added} added, ${run.updated} updated, ${run.removed} removed, ${run.unchanged} unchanged, ${run.failed} failed`
}

/** A source's last runs: when, what each added, updated, removed, and why a file failed. */
function Runs({ source }: { source: Source }) {
  const runs = useSourceRuns(source.id)
  const items = runs.data?.items ?? []
  if (items.length === 0) return <p className="text-xs text-muted-foreground">Not synced yet.</p>
  return (
    <ol className="grid gap-1 text-xs" aria-label={`Runs of ${source.location}`}>
      {items.map((run) => (
        <li key={run.id} className="grid gap-0.5">
          <span>
            <Badge variant={run.status === 'failed' ? 'destructive' : run.status === 'running' ? 'default' : 'outline'}>{run.status}</Badge>{' '}
            {new Date(run.started_at).toLocaleString()} · {run.trigger} · {report(run)}
            {run.commit ? <span className="font-mono"> · {run.commit.slice(0, 10)}</span> : null}
          </span>
          {run.error ? <span className="text-destructive">{run.error}</span> : null}
          {run.failures.map((failure) => (
            <span key={failure.path} className="text-destructive">
              <span className="font-mono">{failure.path}</span>: {failure.reason}
            </span>
          ))}
        </li>
      ))}
    </ol>
  )
}

function SourceRow({ slug, source }: { slug: string; source: Source }) {
  const [editing, setEditing] = useState(false)
  const sync = useSyncSource()
  const update = useUpdateSource()
  const remove = useDeleteSource()
  return (
    <li className="grid gap-2 rounded-lg border p-3" data-testid={`source-${source.id}`}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="grid min-w-0">
          <span className="flex items-center gap-1.5 font-medium break-all">
            <FolderGit2 className="size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
            {source.location}
          </span>
          <span className="text-xs text-muted-foreground">
            {source.kind}
            {source.branch ? ` · ${source.branch}` : ''} · {source.document_count} documents
            {source.schedule_minutes ? ` · every ${source.schedule_minutes} min` : ''}
            {source.paused ? ' · paused' : ''}
          </span>
        </div>
        <div className="flex gap-1">
          <Button
            variant="outline"
            size="sm"
            disabled={sync.isPending || source.syncing}
            onClick={() => {
              sync.mutate(source.id, {
                onSuccess: (run) => toast.success(`Synced: ${report(run)}`),
                onError: (error) => toast.error(errorMessage(error)),
              })
            }}
          >
            <RefreshCw aria-hidden="true" className={sync.isPending ? 'animate-spin' : undefined} />
            {sync.isPending ? 'Syncing…' : 'Sync now'}
          </Button>
          <Button variant="ghost" size="icon-sm" aria-label={`Edit ${source.location}`} aria-expanded={editing} onClick={() => { setEditing(!editing) }}>
            <Pencil aria-hidden="true" />
          </Button>
          <Button
            variant="ghost"
            size="icon-sm"
            aria-label={source.paused ? `Resume ${source.location}` : `Pause ${source.location}`}
            onClick={() => {
              update.mutate({ id: source.id, body: { paused: !source.paused } }, { onError: (error) => toast.error(errorMessage(error)) })
            }}
          >
            {source.paused ? <Play aria-hidden="true" /> : <Pause aria-hidden="true" />}
          </Button>
          <Button
            variant="ghost"
            size="icon-sm"
            aria-label={`Remove ${source.location}`}
            title="Remove the source and the documents it synced"
            onClick={() => {
              remove.mutate(source.id, {
                onSuccess: () => toast.success('The source and its documents are removed'),
                onError: (error) => toast.error(errorMessage(error)),
              })
            }}
          >
            <Trash2 aria-hidden="true" />
          </Button>
        </div>
      </div>
      {source.kind === 'git' ? (
        <p className="text-xs text-muted-foreground break-all">
          Push webhook: <span className="font-mono">{source.webhook_url}</span>
        </p>
      ) : null}
      {editing ? <SourceForm slug={slug} source={source} onDone={() => { setEditing(false) }} /> : null}
      <Runs source={source} />
    </li>
  )
}

/** Add a source to the workspace, or change one (`source` given: a secret left empty is kept). */
function SourceForm({ slug, source, onDone }: { slug: string; source?: Source; onDone?: () => void }) {
  const create = useCreateSource()
  const update = useUpdateSource()
  const [kind, setKind] = useState<SourceCreate['kind']>(source?.kind ?? 'git')
  const [location, setLocation] = useState(source?.location ?? '')
  const [branch, setBranch] = useState(source?.branch ?? '')
  const [include, setInclude] = useState(source?.include.join(', ') ?? '')
  const [exclude, setExclude] = useState(source?.exclude.join(', ') ?? '')
  const [secret, setSecret] = useState('')
  const [schedule, setSchedule] = useState(source?.schedule_minutes ? String(source.schedule_minutes) : '')
  const error = create.error ?? update.error
  const prefix = source ? `source-${source.id}` : 'source'

  function submit(event: SubmitEvent) {
    event.preventDefault()
    if (source) {
      const changed: SourceUpdate = {
        location: location.trim(),
        include: globs(include),
        exclude: globs(exclude),
        schedule_minutes: schedule ? Number(schedule) : null,
      }
      if (source.kind === 'git') {
        changed.branch = branch.trim() || null
        if (secret) changed.secret = secret
      }
      update.mutate({ id: source.id, body: changed }, { onSuccess: () => { toast.success('The source is saved'); onDone?.() } })
      return
    }
    const body: SourceCreate = {
      kind,
      location: location.trim(),
      include: globs(include),
      exclude: globs(exclude),
      paused: false,
      schedule_minutes: schedule ? Number(schedule) : null,
    }
    if (kind === 'git') {
      body.branch = branch.trim() || null
      body.secret = secret || null
    }
    create.mutate(
      { slug, body },
      {
        onSuccess: () => {
          toast.success('The source is added: sync it now')
          setLocation('')
          setSecret('')
        },
      },
    )
  }

  return (
    <form onSubmit={submit} className="grid gap-3 rounded-lg border p-3" aria-label={source ? `Edit ${source.location}` : 'Add a source'}>
      <div className="grid gap-3 sm:grid-cols-[10rem_1fr]">
        <Field id={`${prefix}-kind`} label="Kind">
          <NativeSelect id={`${prefix}-kind`} value={kind} disabled={Boolean(source)} onChange={(event) => { setKind(event.target.value as SourceCreate['kind']) }}>
            <option value="git">Git repository</option>
            <option value="folder">Folder on the server</option>
          </NativeSelect>
        </Field>
        <Field id={`${prefix}-location`} label="Location" hint={kind === 'git' ? 'An https:// or ssh URL, or a path on the server.' : 'A folder under CORPUS_SOURCE_ROOTS.'}>
          <Input id={`${prefix}-location`} value={location} onChange={(event) => { setLocation(event.target.value) }} required autoComplete="off" />
        </Field>
      </div>
      <div className="grid gap-3 sm:grid-cols-3">
        {kind === 'git' ? (
          <Field id={`${prefix}-branch`} label="Branch" hint="Empty: the default branch.">
            <Input id={`${prefix}-branch`} value={branch} onChange={(event) => { setBranch(event.target.value) }} autoComplete="off" />
          </Field>
        ) : null}
        <Field id={`${prefix}-include`} label="Include" hint="Globs, comma-separated: docs/**/*.md">
          <Input id={`${prefix}-include`} value={include} onChange={(event) => { setInclude(event.target.value) }} autoComplete="off" />
        </Field>
        <Field id={`${prefix}-exclude`} label="Exclude" hint="Globs, comma-separated.">
          <Input id={`${prefix}-exclude`} value={exclude} onChange={(event) => { setExclude(event.target.value) }} autoComplete="off" />
        </Field>
      </div>
      <div className="grid gap-3 sm:grid-cols-2">
        {kind === 'git' ? (
          <Field id={`${prefix}-secret`} label="Token or deploy key" hint="For a private repository; stored encrypted, never shown again.">
            <Input id={`${prefix}-secret`} type="password" value={secret} onChange={(event) => { setSecret(event.target.value) }} autoComplete="off" />
          </Field>
        ) : null}
        <Field id={`${prefix}-schedule`} label="Sync every (minutes)" hint="Empty: on demand and by webhook.">
          <Input id={`${prefix}-schedule`} type="number" min={5} max={10080} value={schedule} onChange={(event) => { setSchedule(event.target.value) }} />
        </Field>
      </div>
      {error ? <Alert variant="destructive">{errorMessage(error)}</Alert> : null}
      <div>
        <Button type="submit" disabled={create.isPending || update.isPending}>{source ? 'Save source' : 'Add source'}</Button>
      </div>
    </form>
  )
}

/** A workspace's sources: folders and git repositories kept in sync, with a sync button and
 *  each one's last runs; add, pause and remove them (admins). */
export function SourcesSection() {
  const workspaces = useWorkspaces()
  const local = (workspaces.data?.items ?? []).filter((workspace) => !workspace.remote_url)
  const [chosen, setChosen] = useState('')
  const slug = chosen || local[0]?.slug || ''
  const sources = useSources(slug)
  const items = sources.data?.items ?? []
  return (
    <section className="grid min-w-0 gap-4" aria-labelledby="sources-heading">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="sources-heading" className="text-lg font-semibold">Sources</h2>
          <p className="text-sm text-muted-foreground">Folders and git repositories kept in sync with a workspace.</p>
        </div>
        <Field id="sources-workspace" label="Workspace">
          <NativeSelect id="sources-workspace" value={slug} onChange={(event) => { setChosen(event.target.value) }}>
            {local.map((workspace) => <option key={workspace.slug} value={workspace.slug}>{workspace.slug}</option>)}
          </NativeSelect>
        </Field>
      </div>
      {slug ? <SourceForm key={slug} slug={slug} /> : null}
      {sources.isPending && slug ? (
        <Skeleton className="h-16" aria-busy="true" aria-label="Loading sources" />
      ) : sources.isError ? (
        <Alert variant="destructive">{errorMessage(sources.error)}</Alert>
      ) : items.length === 0 ? (
        <EmptyState icon={FolderGit2} title="No sources">Add a folder or a git repository to keep this workspace in step with it.</EmptyState>
      ) : (
        <ul className="grid gap-3" aria-label="Sources">
          {items.map((source) => <SourceRow key={source.id} slug={slug} source={source} />)}
        </ul>
      )}
    </section>
  )
}
