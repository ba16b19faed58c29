import { Route, TriangleAlert } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { DataTable } from '@/components/ui/data-table'
import { Button } from '@/components/ui/button'
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import { EmptyState } from '@/components/ui/empty-state'
import { Input } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { useWorkspaces } from '@/lib/workspaces'

import { usePolicy, useResetPersona, useSetPersona } from '../api/workspaces'
import { ContextPreview } from './context-preview'

const LAYER_LABELS = { builtin: 'Built-in', file: 'File', admin: 'Admin' } as const

/** The effective persona policy: each persona's workspaces in priority order, the layer it
 *  comes from, and which of its workspaces do not exist; edits go to the admin layer. */
export function PersonaPolicy() {
  const policy = usePolicy()
  const workspaces = useWorkspaces()
  const reset = useResetPersona()
  const [editing, setEditing] = useState<{ slug: string; workspaces: string[] } | null>(null)
  const [previewing, setPreviewing] = useState<string>('')
  const existing = new Set(workspaces.data?.items.map((w) => w.slug) ?? [])
  const personas = Object.entries(policy.data?.personas ?? {}).sort(([a], [b]) => a.localeCompare(b))

  return (
    <section className="grid min-w-0 gap-4" aria-labelledby="personas-heading">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div className="grid gap-1">
          <h2 id="personas-heading" className="text-lg font-semibold">Personas</h2>
          {policy.data ? (
            <p className="text-sm text-muted-foreground">
              Routing: {policy.data.routing_mode}
              {policy.data.default_persona ? ` · default persona ${policy.data.default_persona}` : ''}
            </p>
          ) : null}
        </div>
        <Button onClick={() => { setEditing({ slug: '', workspaces: [] }) }}>
          <Route aria-hidden="true" />
          New persona
        </Button>
      </div>
      {policy.isPending ? (
        <Skeleton className="h-24" aria-busy="true" aria-label="Loading the policy" />
      ) : policy.isError ? (
        <Alert variant="destructive">{errorMessage(policy.error)}</Alert>
      ) : personas.length === 0 ? (
        <EmptyState icon={Route} title="No personas">
          A persona routes a person&apos;s or an agent&apos;s questions to the workspaces that suit them.
        </EmptyState>
      ) : (
        <DataTable
          label="Persona policy"
          columns={[
            { label: 'Persona' },
            { label: 'Workspaces, in priority order' },
            { label: 'Layer' },
            { label: 'Actions', hidden: true },
          ]}
        >
          {personas.map(([slug, entry]) => {
            const missing = workspaces.data ? entry.workspaces.filter((w) => !existing.has(w)) : []
            return (
              <tr key={slug} data-testid={`persona-${slug}`}>
                <td className="px-3 py-2 font-mono text-xs font-medium">{slug}</td>
                <td className="px-3 py-2">
                  <div className="flex flex-wrap gap-1">
                    {entry.workspaces.map((w) => (
                      <Badge key={w} variant={missing.includes(w) ? 'destructive' : 'outline'} title={missing.includes(w) ? 'This workspace does not exist' : undefined}>
                        {w}
                        {missing.includes(w) ? <span className="sr-only"> (missing)</span> : null}
                      </Badge>
                    ))}
                  </div>
                  {missing.length > 0 ? (
                    <p className="mt-1 flex items-center gap-1 text-xs text-destructive">
                      <TriangleAlert className="size-3" aria-hidden="true" />
                      {missing.length === entry.workspaces.length
                        ? 'None of its workspaces exist: it finds nothing'
                        : `Missing: ${missing.join(', ')}`}
                    </p>
                  ) : null}
                </td>
                <td className="px-3 py-2">
                  <Badge variant={entry.source === 'admin' ? 'default' : 'secondary'}>{LAYER_LABELS[entry.source]}</Badge>
                </td>
                <td className="px-3 py-2 text-right whitespace-nowrap">
                  <Button
                      variant="ghost"
                      size="sm"
                      onClick={() => {
                        setPreviewing(slug)
                        // The preview sits below a long table: take the person to its question.
                        document.getElementById('preview-question')?.focus()
                      }}
                    >
                      Preview
                    </Button>
                  <Button variant="ghost" size="sm" aria-label={`Edit ${slug}`} onClick={() => { setEditing({ slug, workspaces: entry.workspaces }) }}>
                    Edit
                  </Button>
                  {entry.source === 'admin' ? (
                    <Button
                      variant="ghost"
                      size="sm"
                      aria-label={`Reset ${slug} to the lower layer`}
                      disabled={reset.isPending}
                      onClick={() => {
                        reset.mutate(slug, {
                          onSuccess: () => toast.success(`${slug} follows the lower layer again`),
                          onError: (error) => toast.error(errorMessage(error)),
                        })
                      }}
                    >
                      Reset
                    </Button>
                  ) : null}
                </td>
              </tr>
            )
          })}
        </DataTable>
      )}
      <ContextPreview personas={personas.map(([slug]) => slug)} persona={previewing} onPersona={setPreviewing} />
      <Dialog open={editing !== null} onOpenChange={(open) => { if (!open) setEditing(null) }}>
        <DialogContent className="max-w-lg">
          {editing ? <PersonaForm initial={editing} onDone={() => { setEditing(null) }} /> : null}
        </DialogContent>
      </Dialog>
    </section>
  )
}

function PersonaForm({ initial, onDone }: { initial: { slug: string; workspaces: string[] }; onDone: () => void }) {
  const set = useSetPersona()
  const workspaces = useWorkspaces()
  const [slug, setSlug] = useState(initial.slug)
  const [list, setList] = useState(initial.workspaces.join(', '))
  const chosen = list.split(/[\s,]+/).filter(Boolean)

  function submit(event: SubmitEvent) {
    event.preventDefault()
    set.mutate(
      { slug: slug.trim(), workspaces: chosen },
      { onSuccess: () => { toast.success(`${slug} is saved in the admin layer`); onDone() } },
    )
  }

  return (
    <form onSubmit={submit} className="grid gap-4">
      <DialogHeader>
        <DialogTitle>{initial.slug ? `Edit ${initial.slug}` : 'New persona'}</DialogTitle>
        <DialogDescription>
          Saved in the admin layer, over the file and the built-in table. Reset drops it again.
        </DialogDescription>
      </DialogHeader>
      {initial.slug ? null : (
        <Field id="persona-slug" label="Persona">
          <Input id="persona-slug" value={slug} onChange={(event) => { setSlug(event.target.value) }} required pattern="[a-z0-9][a-z0-9_\-]{1,63}" />
        </Field>
      )}
      <Field id="persona-workspaces" label="Workspaces" hint="In priority order, separated by commas.">
        <Input id="persona-workspaces" value={list} onChange={(event) => { setList(event.target.value) }} list="persona-workspace-names" />
      </Field>
      <div className="flex flex-wrap gap-1" aria-label="Add a workspace">
        {workspaces.data?.items
          .filter((w) => !chosen.includes(w.slug))
          .map((w) => (
            <Button key={w.slug} variant="outline" size="sm" onClick={() => { setList([...chosen, w.slug].join(', ')) }}>
              + {w.slug}
            </Button>
          ))}
      </div>
      {set.isError ? <Alert variant="destructive">{errorMessage(set.error)}</Alert> : null}
      <DialogFooter>
        <Button type="submit" disabled={set.isPending || !slug.trim()}>Save</Button>
      </DialogFooter>
    </form>
  )
}
