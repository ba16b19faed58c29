import { FolderPlus, Globe, Layers, Pencil, Trash2 } from 'lucide-react'
import { useState } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { DataTable } from '@/components/ui/data-table'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent } from '@/components/ui/dialog'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { useWorkspaces, type Workspace } from '@/lib/workspaces'

import { useDeleteWorkspace, usePolicy } from '../api/workspaces'
import { WorkspaceForm } from './workspace-dialog'

/** Every workspace with its license (set here, or where the policy gives it), tier and
 *  document count; create, edit and delete an empty one. */
export function WorkspacesTable() {
  const workspaces = useWorkspaces()
  const policy = usePolicy()
  const remove = useDeleteWorkspace()
  const [editing, setEditing] = useState<Workspace | 'new' | null>(null)
  const items = workspaces.data?.items ?? []
  return (
    <section className="grid min-w-0 gap-4" aria-labelledby="workspaces-heading">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="workspaces-heading" className="text-lg font-semibold">Workspaces</h2>
        <Button onClick={() => { setEditing('new') }}>
          <FolderPlus aria-hidden="true" />
          New workspace
        </Button>
      </div>
      {workspaces.isPending ? (
        <Skeleton className="h-24" aria-busy="true" aria-label="Loading workspaces" />
      ) : workspaces.isError ? (
        <Alert variant="destructive">{errorMessage(workspaces.error)}</Alert>
      ) : items.length === 0 ? (
        <EmptyState icon={Layers} title="No workspaces">Create one to hold documents.</EmptyState>
      ) : (
        <DataTable
          label="Workspaces"
          columns={[
            { label: 'Workspace' },
            { label: 'License' },
            { label: 'Tier', className: 'hidden sm:table-cell' },
            { label: 'Documents', className: 'hidden text-right sm:table-cell' },
            { label: 'Actions', hidden: true },
          ]}
        >
          {items.map((workspace) => {
            const effective = policy.data?.licenses[workspace.slug]
            return (
              <tr key={workspace.slug} data-testid={`workspace-${workspace.slug}`}>
                <td className="px-3 py-2">
                  <div className="grid min-w-0">
                    <span className="flex items-center gap-1.5 font-medium">
                      {workspace.remote_url ? <Globe className="size-3.5 text-muted-foreground" aria-label="Remote" /> : null}
                      {workspace.title}
                    </span>
                    <span className="truncate font-mono text-xs text-muted-foreground">{workspace.slug}</span>
                  </div>
                </td>
                <td className="px-3 py-2">
                  {workspace.license ? (
                    <Badge variant={workspace.license === 'PROPRIETARY' ? 'secondary' : 'outline'}>
                      {workspace.license === 'PROPRIETARY' ? 'Proprietary' : workspace.license}
                    </Badge>
                  ) : (
                    <span className="text-xs text-muted-foreground">
                      {effective ? `${effective.license} (from ${effective.source})` : 'From the policy'}
                    </span>
                  )}
                </td>
                <td className="hidden px-3 py-2 capitalize sm:table-cell">{workspace.tier}</td>
                <td className="hidden px-3 py-2 text-right tabular-nums sm:table-cell">{workspace.document_count}</td>
                <td className="px-3 py-2 text-right whitespace-nowrap">
                  <Button variant="ghost" size="icon-sm" aria-label={`Edit ${workspace.slug}`} onClick={() => { setEditing(workspace) }}>
                    <Pencil aria-hidden="true" />
                  </Button>
                  <Button
                    variant="ghost"
                    size="icon-sm"
                    aria-label={`Delete ${workspace.slug}`}
                    disabled={remove.isPending || workspace.slug === 'default'}
                    title={workspace.slug === 'default' ? 'The default workspace stays' : 'Delete an empty workspace'}
                    onClick={() => {
                      remove.mutate(workspace.slug, {
                        onSuccess: () => toast.success(`${workspace.slug} is deleted`),
                        onError: (error) => toast.error(errorMessage(error)),
                      })
                    }}
                  >
                    <Trash2 aria-hidden="true" />
                  </Button>
                </td>
              </tr>
            )
          })}
        </DataTable>
      )}
      <Dialog open={editing !== null} onOpenChange={(open) => { if (!open) setEditing(null) }}>
        <DialogContent className="max-w-lg">
          {editing !== null ? (
            <WorkspaceForm workspace={editing === 'new' ? undefined : editing} onDone={() => { setEditing(null) }} />
          ) : null}
        </DialogContent>
      </Dialog>
    </section>
  )
}
