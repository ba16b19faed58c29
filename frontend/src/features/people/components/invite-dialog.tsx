import { UserPlus } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
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
import { Input, NativeSelect } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { errorMessage } from '@/lib/api-client'

import { useInvitePerson, type Person, type PersonCreate } from '../api/people'

type Role = PersonCreate['role']

/** Add a person (who gets a temporary password, shown once) or an agent account (keys only). */
export function InviteDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const [created, setCreated] = useState<{ person: Person; password: string | null } | null>(null)
  return (
    <Dialog
      open={open}
      onOpenChange={(value) => {
        if (!value) setCreated(null)
        onOpenChange(value)
      }}
    >
      <DialogContent className="max-w-lg">
        {created ? (
          <Invited {...created} onDone={() => { setCreated(null); onOpenChange(false) }} />
        ) : (
          <InviteForm onCreated={(person, password) => { setCreated({ person, password }) }} />
        )}
      </DialogContent>
    </Dialog>
  )
}

function InviteForm({ onCreated }: { onCreated: (person: Person, password: string | null) => void }) {
  const invite = useInvitePerson()
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [role, setRole] = useState<Role>('viewer')
  const [kind, setKind] = useState<'human' | 'agent'>('human')

  function submit(event: SubmitEvent) {
    event.preventDefault()
    invite.mutate(
      { email: email.trim(), display_name: name.trim(), role, kind },
      { onSuccess: (person) => { onCreated(person, person.temporary_password ?? null) } },
    )
  }

  return (
    <form onSubmit={submit} className="grid gap-4">
      <DialogHeader>
        <DialogTitle>Invite someone</DialogTitle>
        <DialogDescription>
          A person gets a temporary password to change at the first sign-in. An agent account has
          no password: it uses API keys.
        </DialogDescription>
      </DialogHeader>
      <Field id="invite-kind" label="Account">
        <NativeSelect id="invite-kind" value={kind} onChange={(event) => { setKind(event.target.value as 'human' | 'agent') }}>
          <option value="human">A person</option>
          <option value="agent">An agent (API keys only)</option>
        </NativeSelect>
      </Field>
      <Field id="invite-email" label="Email">
        <Input id="invite-email" type="email" value={email} onChange={(event) => { setEmail(event.target.value) }} required autoComplete="off" />
      </Field>
      <Field id="invite-name" label="Name">
        <Input id="invite-name" value={name} onChange={(event) => { setName(event.target.value) }} maxLength={200} autoComplete="off" />
      </Field>
      <Field id="invite-role" label="Role" hint="Viewers search and ask; editors add documents; admins run Corpus.">
        <NativeSelect id="invite-role" value={role} onChange={(event) => { setRole(event.target.value as Role) }}>
          <option value="viewer">Viewer</option>
          <option value="editor">Editor</option>
          <option value="admin">Admin</option>
        </NativeSelect>
      </Field>
      {invite.isError ? <Alert variant="destructive">{errorMessage(invite.error)}</Alert> : null}
      <DialogFooter>
        <Button type="submit" disabled={invite.isPending || !email.trim()}>
          <UserPlus aria-hidden="true" />
          {kind === 'agent' ? 'Add agent' : 'Invite'}
        </Button>
      </DialogFooter>
    </form>
  )
}

function Invited({ person, password, onDone }: { person: Person; password: string | null; onDone: () => void }) {
  const signIn = `${window.location.origin}/login`
  return (
    <div className="grid gap-4">
      <DialogHeader>
        <DialogTitle>{person.kind === 'agent' ? 'Agent added' : 'Invitation ready'}</DialogTitle>
        <DialogDescription>
          {person.kind === 'agent'
            ? `${person.email} can act once it has an API key: mint one from the keys list.`
            : `Send ${person.email} the sign-in address and this temporary password. They choose their own at the first sign-in.`}
        </DialogDescription>
      </DialogHeader>
      {password ? (
        <>
          <CopyBlock text={password} name="Temporary password" label="Copy password" />
          <CopyBlock
            text={`Sign in to Corpus at ${signIn} as ${person.email} with the temporary password ${password}`}
            name="Invitation message"
            label="Copy invitation"
          />
          <p className="text-xs text-muted-foreground">Shown this once: a reset gives a new one.</p>
        </>
      ) : null}
      <DialogFooter>
        <Button onClick={onDone}>Done</Button>
      </DialogFooter>
    </div>
  )
}
