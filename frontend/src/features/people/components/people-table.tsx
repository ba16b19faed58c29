import { Bot, Ellipsis, KeyRound, UserPlus, Users } from 'lucide-react'
import { useState } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { DataTable } from '@/components/ui/data-table'
import { Button } from '@/components/ui/button'
import { CopyBlock } from '@/components/ui/copy-button'
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { EmptyState } from '@/components/ui/empty-state'
import { Input, NativeSelect } from '@/components/ui/input'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'

import {
  usePeople,
  useResetPassword,
  useUnlockPerson,
  useUpdatePerson,
  type Person,
} from '../api/people'
import { InviteDialog } from './invite-dialog'
import { MintKeyDialog } from './mint-key-dialog'

export const FILTERS = ['all', 'people', 'agents', 'locked', 'dormant', 'disabled'] as const
export type Filter = (typeof FILTERS)[number]

const FILTER_LABELS: Record<Filter, string> = {
  all: 'All',
  people: 'People',
  agents: 'Agents',
  locked: 'Locked',
  dormant: 'Dormant',
  disabled: 'Disabled',
}

export function matches(person: Person, filter: Filter, text: string): boolean {
  const needle = text.trim().toLowerCase()
  if (needle && !`${person.display_name} ${person.email}`.toLowerCase().includes(needle)) return false
  switch (filter) {
    case 'all':
      return true
    case 'people':
      return person.kind === 'human'
    case 'agents':
      return person.kind === 'agent'
    case 'locked':
      return person.locked
    case 'dormant':
      return person.dormant
    case 'disabled':
      return !person.active
  }
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** The team: people and agent accounts, their role, status and last activity, with the
 *  admin's actions on each. */
export function PeopleTable({ meId }: { meId: string }) {
  const people = usePeople()
  const [filter, setFilter] = useState<Filter>('all')
  const [text, setText] = useState('')
  const [inviting, setInviting] = useState(false)
  const [minting, setMinting] = useState<string | null>(null)
  const [temporary, setTemporary] = useState<{ email: string; password: string } | null>(null)

  const items = people.data?.items ?? []
  const shown = items.filter((person) => matches(person, filter, text))
  const counts = Object.fromEntries(FILTERS.map((f) => [f, items.filter((p) => matches(p, f, '')).length]))

  return (
    <section className="grid min-w-0 gap-4" aria-labelledby="people-heading">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="people-heading" className="text-lg font-semibold">Team</h2>
        <Button onClick={() => { setInviting(true) }}>
          <UserPlus aria-hidden="true" />
          Invite
        </Button>
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <div role="group" aria-label="Show" className="flex flex-wrap gap-1">
          {FILTERS.map((f) => (
            <button
              key={f}
              type="button"
              aria-pressed={filter === f}
              onClick={() => { setFilter(f) }}
              className={cn(
                'h-8 rounded-md border px-2.5 text-xs font-medium focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                filter === f ? 'border-transparent bg-primary text-primary-foreground' : 'text-muted-foreground hover:bg-muted',
              )}
            >
              {FILTER_LABELS[f]} <span className="tabular-nums opacity-70">{counts[f]}</span>
            </button>
          ))}
        </div>
        <Input
          aria-label="Filter by name or email"
          placeholder="Name or email…"
          value={text}
          onChange={(event) => { setText(event.target.value) }}
          className="h-8 max-w-56"
        />
      </div>
      {people.isPending ? (
        <div className="grid gap-2" aria-busy="true" aria-label="Loading people">
          <Skeleton className="h-10" />
          <Skeleton className="h-10" />
          <Skeleton className="h-10" />
        </div>
      ) : people.isError ? (
        <Alert variant="destructive">{errorMessage(people.error)}</Alert>
      ) : shown.length === 0 ? (
        <EmptyState icon={Users} title="Nobody matches">
          Change the filter, or invite someone.
        </EmptyState>
      ) : (
        <DataTable
          label="People and agents"
          columns={[
            { label: 'Name' },
            { label: 'Role' },
            { label: 'Status' },
            { label: 'Last seen', className: 'hidden sm:table-cell' },
            { label: 'Actions', hidden: true },
          ]}
        >
          {shown.map((person) => (
            <PersonRow
              key={person.id}
              person={person}
              self={person.id === meId}
              onMint={() => { setMinting(person.id) }}
              onReset={(password) => { setTemporary({ email: person.email, password }) }}
            />
          ))}
        </DataTable>
      )}
      <InviteDialog open={inviting} onOpenChange={setInviting} />
      <MintKeyDialog open={minting !== null} onOpenChange={(open) => { if (!open) setMinting(null) }} userId={minting ?? undefined} />
      <Dialog open={temporary !== null} onOpenChange={(open) => { if (!open) setTemporary(null) }}>
        <DialogContent className="max-w-lg">
          <DialogHeader>
            <DialogTitle>Password reset</DialogTitle>
            <DialogDescription>
              Give {temporary?.email} this temporary password: it is shown this once, and they choose their own at the next sign-in.
            </DialogDescription>
          </DialogHeader>
          {temporary ? <CopyBlock text={temporary.password} name="Temporary password" label="Copy password" /> : null}
          <DialogFooter>
            <Button onClick={() => { setTemporary(null) }}>Done</Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </section>
  )
}

function PersonRow({
  person,
  self,
  onMint,
  onReset,
}: {
  person: Person
  self: boolean
  onMint: () => void
  onReset: (password: string) => void
}) {
  const update = useUpdatePerson()
  const reset = useResetPassword()
  const unlock = useUnlockPerson()
  const name = person.display_name || person.email
  const failed = (error: unknown) => toast.error(errorMessage(error))
  return (
    <tr data-testid={`person-${person.email}`}>
      <td className="px-3 py-2">
        <div className="flex min-w-0 items-center gap-2">
          {person.kind === 'agent' ? (
            <Bot className="size-4 shrink-0 text-muted-foreground" aria-label="Agent" />
          ) : null}
          <div className="grid min-w-0">
            <span className="truncate font-medium">{name}</span>
            <span className="truncate text-xs text-muted-foreground">{person.email}</span>
          </div>
        </div>
      </td>
      <td className="px-3 py-2">
        <NativeSelect
          aria-label={`Role of ${name}`}
          value={person.role}
          disabled={update.isPending || self}
          title={self ? 'You cannot change your own role' : undefined}
          onChange={(event) => {
            const role = event.target.value as Person['role']
            update.mutate(
              { id: person.id, body: { role } },
              { onSuccess: () => toast.success(`${name} is now ${role}`), onError: failed },
            )
          }}
          className="h-8 w-28"
        >
          <option value="viewer">Viewer</option>
          <option value="editor">Editor</option>
          <option value="admin">Admin</option>
        </NativeSelect>
      </td>
      <td className="px-3 py-2">
        <div className="flex flex-wrap gap-1">
          {person.active ? <Badge variant="default">Active</Badge> : <Badge variant="secondary">Disabled</Badge>}
          {person.locked ? <Badge variant="destructive">Locked</Badge> : null}
          {person.dormant ? <Badge variant="outline" title="No sign-in for 60 days">Dormant</Badge> : null}
        </div>
      </td>
      <td className="hidden px-3 py-2 text-muted-foreground sm:table-cell">
        {person.last_seen_at ? dateFormat.format(new Date(person.last_seen_at)) : 'Never'}
      </td>
      <td className="px-3 py-2 text-right">
        <DropdownMenu>
          <DropdownMenuTrigger asChild>
            <Button variant="ghost" size="icon-sm" aria-label={`Actions for ${name}`}>
              <Ellipsis aria-hidden="true" />
            </Button>
          </DropdownMenuTrigger>
          <DropdownMenuContent align="end">
            <DropdownMenuItem onSelect={onMint}>
              <KeyRound aria-hidden="true" />
              Mint a key
            </DropdownMenuItem>
            {person.kind === 'human' && !self ? (
              <DropdownMenuItem
                onSelect={() => {
                  reset.mutate(person.id, {
                    onSuccess: (reply) => { onReset(reply.temporary_password) },
                    onError: failed,
                  })
                }}
              >
                Reset password
              </DropdownMenuItem>
            ) : null}
            {person.locked ? (
              <DropdownMenuItem
                onSelect={() => {
                  unlock.mutate(person.id, { onSuccess: () => toast.success(`${name} is unlocked`), onError: failed })
                }}
              >
                Unlock
              </DropdownMenuItem>
            ) : null}
            {self ? null : (
              <DropdownMenuItem
                onSelect={() => {
                  update.mutate(
                    { id: person.id, body: { active: !person.active } },
                    {
                      onSuccess: () => toast.success(person.active ? `${name} is disabled` : `${name} is enabled`),
                      onError: failed,
                    },
                  )
                }}
              >
                {person.active ? 'Disable' : 'Enable'}
              </DropdownMenuItem>
            )}
          </DropdownMenuContent>
        </DropdownMenu>
      </td>
    </tr>
  )
}
