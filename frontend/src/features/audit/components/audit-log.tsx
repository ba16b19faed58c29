import { ScrollText } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Input } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useAudit, type AuditEntry, type AuditFilters } from '../api/audit'

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/** A date input's day as the start of that day in the browser's zone, in UTC ISO form. */
function dayStart(day: string, plusDays = 0): string | undefined {
  if (!day) return undefined
  const date = new Date(`${day}T00:00:00`)
  date.setDate(date.getDate() + plusDays)
  return date.toISOString()
}

/** The audit log, newest first: filter by who, what, which target and when; each change's
 *  before and after side by side. */
export function AuditLog() {
  const [draft, setDraft] = useState({ actor: '', action: '', target: '', from: '', to: '' })
  const [filters, setFilters] = useState<AuditFilters>({})
  // The cursors of the pages before this one, to page back.
  const [trail, setTrail] = useState<(string | undefined)[]>([])
  const audit = useAudit(filters)

  function submit(event: SubmitEvent) {
    event.preventDefault()
    const next: AuditFilters = {}
    if (draft.actor.trim()) next.actor = draft.actor.trim()
    if (draft.action.trim()) next.action = draft.action.trim()
    if (draft.target.trim()) next.target = draft.target.trim()
    const since = dayStart(draft.from)
    const until = dayStart(draft.to, 1)
    if (since) next.since = since
    if (until) next.until = until
    setTrail([])
    setFilters(next)
  }

  const field = (name: keyof typeof draft) => ({
    value: draft[name],
    onChange: (event: { target: { value: string } }) => { setDraft({ ...draft, [name]: event.target.value }) },
  })

  return (
    <div className="grid gap-4">
      <form onSubmit={submit} aria-label="Filter the audit log" className="grid gap-3 sm:grid-cols-3 lg:grid-cols-[1fr_1fr_1fr_9rem_9rem_auto] lg:items-end">
        <Field id="audit-actor" label="Who">
          <Input id="audit-actor" placeholder="Email or id" {...field('actor')} />
        </Field>
        <Field id="audit-action" label="Action">
          <Input id="audit-action" placeholder="user.update" list="audit-actions" {...field('action')} />
          <datalist id="audit-actions">
            {['user.create', 'user.update', 'user.password_reset', 'user.unlock', 'key.create', 'key.revoke', 'persona.set', 'persona.delete', 'workspace.create', 'workspace.update', 'workspace.delete'].map((a) => <option key={a} value={a} />)}
          </datalist>
        </Field>
        <Field id="audit-target" label="Target">
          <Input id="audit-target" placeholder="An id or a name" {...field('target')} />
        </Field>
        <Field id="audit-from" label="From">
          <Input id="audit-from" type="date" {...field('from')} />
        </Field>
        <Field id="audit-to" label="To">
          <Input id="audit-to" type="date" {...field('to')} />
        </Field>
        <Button type="submit">Filter</Button>
      </form>
      {audit.isPending ? (
        <div className="grid gap-2" aria-busy="true" aria-label="Loading the audit log">
          <Skeleton className="h-16" />
          <Skeleton className="h-16" />
        </div>
      ) : audit.isError ? (
        <Alert variant="destructive">{errorMessage(audit.error)}</Alert>
      ) : audit.data.items.length === 0 ? (
        <EmptyState icon={ScrollText} title="Nothing recorded">
          Role changes, password resets, keys minted and revoked, workspace and policy edits appear here.
        </EmptyState>
      ) : (
        <ol className="grid gap-2" aria-label="Audit entries">
          {audit.data.items.map((entry) => <Entry key={entry.id} entry={entry} />)}
        </ol>
      )}
      <div className="flex justify-between">
        <Button
          variant="outline"
          disabled={trail.length === 0}
          onClick={() => {
            const previous = trail.slice(0, -1)
            const cursor = trail.at(-1)
            setTrail(previous)
            setFilters((current) => {
              const rest = { ...current }
              delete rest.cursor
              return cursor ? { ...rest, cursor } : rest
            })
          }}
        >
          Newer
        </Button>
        <Button
          variant="outline"
          disabled={!audit.data?.next_cursor}
          onClick={() => {
            const next = audit.data?.next_cursor
            if (!next) return
            setTrail([...trail, filters.cursor])
            setFilters({ ...filters, cursor: next })
          }}
        >
          Older
        </Button>
      </div>
    </div>
  )
}

function Entry({ entry }: { entry: AuditEntry }) {
  const keys = [...new Set([...Object.keys(entry.before ?? {}), ...Object.keys(entry.after ?? {})])]
  return (
    <li className="grid gap-2 rounded-lg border p-3 text-sm" data-testid="audit-entry">
      <div className="flex flex-wrap items-center gap-2">
        <Badge variant="outline" className="font-mono">{entry.action}</Badge>
        <span className="text-muted-foreground">
          {entry.target_type} <span className="font-mono text-xs">{entry.target_id ?? '—'}</span>
        </span>
        <span className="ml-auto text-xs text-muted-foreground">
          {entry.actor_email ?? 'the server'} · {timeFormat.format(new Date(entry.at))}
        </span>
      </div>
      {keys.length > 0 ? (
        <table className="w-full text-xs" aria-label={`Changes of ${entry.action}`}>
          <thead className="text-left text-muted-foreground">
            <tr>
              <th scope="col" className="w-1/4 py-1 font-medium">Field</th>
              <th scope="col" className="py-1 font-medium">Before</th>
              <th scope="col" className="py-1 font-medium">After</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key} className="border-t align-top">
                <th scope="row" className="py-1 pr-2 font-mono font-normal">{key}</th>
                <td className="py-1 pr-2 font-mono break-all text-muted-foreground">{shown(entry.before, key)}</td>
                <td className="py-1 font-mono break-all">{shown(entry.after, key)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </li>
  )
}

function shown(values: Record<string, unknown> | null, key: string): string {
  if (!values || !(key in values)) return '—'
  const value = values[key]
  return typeof value === 'string' ? value : JSON.stringify(value)
}
