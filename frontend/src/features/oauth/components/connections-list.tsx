import { Plug, Unplug } from 'lucide-react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useConnections, useDisconnect } from '../api/connections'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

export function ConnectionsList() {
  const connections = useConnections()
  const disconnect = useDisconnect()

  if (connections.isPending) {
    return (
      <div className="grid gap-2" aria-busy="true" aria-label="Loading connected apps">
        <Skeleton className="h-14" />
        <Skeleton className="h-14" />
      </div>
    )
  }
  if (connections.isError) {
    return <Alert variant="destructive">{errorMessage(connections.error)}</Alert>
  }
  if (connections.data.items.length === 0) {
    return (
      <EmptyState icon={Plug} title="No connected apps">
        When you approve an MCP client (Claude, Cursor, an IDE agent) it shows here, and you can
        disconnect it.
      </EmptyState>
    )
  }
  return (
    <ul className="divide-y rounded-lg border" aria-label="Connected apps">
      {connections.data.items.map((connection) => (
        <li key={connection.client_id} className="flex items-center justify-between gap-4 p-3">
          <div className="grid min-w-0 gap-0.5">
            <p className="truncate text-sm font-medium">{connection.client_name}</p>
            <p className="truncate text-xs text-muted-foreground">
              {connection.verified_domain ? `${connection.verified_domain} (verified) · ` : ''}
              {connection.redirect_hosts.join(', ')} · connected{' '}
              {dateFormat.format(new Date(connection.created_at))}
              {connection.last_used_at
                ? ` · last used ${dateFormat.format(new Date(connection.last_used_at))}`
                : ' · never used'}
            </p>
          </div>
          <Button
            variant="outline"
            size="sm"
            disabled={disconnect.isPending}
            onClick={() => {
              disconnect.mutate(connection.client_id, {
                onSuccess: () => toast.success(`${connection.client_name} is disconnected`),
                onError: (error) => toast.error(errorMessage(error)),
              })
            }}
          >
            <Unplug aria-hidden="true" />
            Disconnect
          </Button>
        </li>
      ))}
    </ul>
  )
}
