import { KeyRound } from 'lucide-react'
import { useState } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { DataTable } from '@/components/ui/data-table'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useKeys, useRevokeKey } from '../api/people'
import { MintKeyDialog } from './mint-key-dialog'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** Every API key: whose, where it is bound, when it was last used; revoke at once. */
export function KeysTable() {
  const keys = useKeys()
  const [minting, setMinting] = useState(false)
  const [showRevoked, setShowRevoked] = useState(false)
  const items = (keys.data?.items ?? []).filter((key) => showRevoked || !key.revoked_at)
  return (
    <section className="grid min-w-0 gap-4" aria-labelledby="keys-heading">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="keys-heading" className="text-lg font-semibold">API keys</h2>
        <div className="flex items-center gap-2">
          <label className="flex items-center gap-2 text-sm text-muted-foreground">
            <input type="checkbox" checked={showRevoked} onChange={(event) => { setShowRevoked(event.target.checked) }} />
            Show revoked
          </label>
          <Button onClick={() => { setMinting(true) }}>
            <KeyRound aria-hidden="true" />
            Mint a key
          </Button>
        </div>
      </div>
      {keys.isPending ? (
        <Skeleton className="h-24" aria-busy="true" aria-label="Loading keys" />
      ) : keys.isError ? (
        <Alert variant="destructive">{errorMessage(keys.error)}</Alert>
      ) : items.length === 0 ? (
        <EmptyState icon={KeyRound} title="No keys yet">
          An agent (Claude Code, Cursor, a CI job) reaches Corpus at /mcp with a key. Mint one for
          an agent account and paste the snippet into the client.
        </EmptyState>
      ) : (
        <DataTable
          label="API keys"
          columns={[
            { label: 'Key' },
            { label: 'Account' },
            { label: 'Bound to', className: 'hidden sm:table-cell' },
            { label: 'Last used', className: 'hidden md:table-cell' },
            { label: 'Actions', hidden: true },
          ]}
        >
          {items.map((key) => (
            <tr key={key.id} data-testid={`key-${key.name}`}>
              <td className="px-3 py-2">
                <div className="grid">
                  <span className="font-medium">{key.name}</span>
                  <span className="font-mono text-xs text-muted-foreground">{key.prefix}…</span>
                </div>
              </td>
              <td className="max-w-48 truncate px-3 py-2">{key.email}</td>
              <td className="hidden px-3 py-2 sm:table-cell">
                <div className="flex flex-wrap gap-1">
                  {key.workspace ? <Badge variant="outline">workspace {key.workspace}</Badge> : null}
                  {key.persona ? <Badge variant="outline">persona {key.persona}</Badge> : null}
                  {!key.workspace && !key.persona ? <span className="text-muted-foreground">Everything</span> : null}
                </div>
              </td>
              <td className="hidden px-3 py-2 text-muted-foreground md:table-cell">
                {key.last_used_at ? dateFormat.format(new Date(key.last_used_at)) : 'Never'}
              </td>
              <td className="px-3 py-2 text-right">
                {key.revoked_at ? (
                  <Badge variant="secondary">Revoked</Badge>
                ) : (
                  <RevokeButton name={key.name} id={key.id} />
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <MintKeyDialog open={minting} onOpenChange={setMinting} />
    </section>
  )
}

/** Revoking takes a second click: the key's agent stops at once. */
function RevokeButton({ id, name }: { id: string; name: string }) {
  const revoke = useRevokeKey()
  const [confirming, setConfirming] = useState(false)
  if (!confirming) {
    return (
      <Button variant="outline" size="sm" aria-label={`Revoke ${name}`} onClick={() => { setConfirming(true) }}>
        Revoke
      </Button>
    )
  }
  return (
    <span className="inline-flex gap-1">
      <Button variant="ghost" size="sm" onClick={() => { setConfirming(false) }}>
        Keep
      </Button>
      <Button
        variant="destructive"
        size="sm"
        aria-label={`Confirm revoking ${name}`}
        disabled={revoke.isPending}
        onClick={() => {
          revoke.mutate(id, {
            onSuccess: () => toast.success(`${name} is revoked`),
            onError: (error) => toast.error(errorMessage(error)),
          })
        }}
      >
        Revoke now
      </Button>
    </span>
  )
}
