import { KeyRound, TriangleAlert } from 'lucide-react'
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
import { useWorkspaces } from '@/lib/workspaces'

import { useMintKey, usePeople, type ApiKeyCreated } from '../api/people'
import { ClientSnippets } from './client-snippets'

/** Mint an API key for a person or an agent account, optionally bound to a workspace or a
 *  persona; the secret is shown once, with the MCP clients' snippets filled with it. */
export function MintKeyDialog({
  open,
  onOpenChange,
  userId,
  onMinted,
}: {
  open: boolean
  onOpenChange: (open: boolean) => void
  userId?: string | undefined
  onMinted?: (key: ApiKeyCreated) => void
}) {
  const [minted, setMinted] = useState<ApiKeyCreated | null>(null)
  return (
    <Dialog
      open={open}
      onOpenChange={(value) => {
        if (!value) setMinted(null)
        onOpenChange(value)
      }}
    >
      <DialogContent className="max-w-2xl">
        {minted ? (
          <Minted minted={minted} onDone={() => { setMinted(null); onOpenChange(false) }} />
        ) : (
          <MintForm
            userId={userId}
            onMinted={(key) => {
              setMinted(key)
              onMinted?.(key)
            }}
          />
        )}
      </DialogContent>
    </Dialog>
  )
}

function MintForm({ userId, onMinted }: { userId?: string | undefined; onMinted: (key: ApiKeyCreated) => void }) {
  const people = usePeople()
  const workspaces = useWorkspaces()
  const mint = useMintKey()
  const accounts = (people.data?.items ?? []).filter((person) => person.active)
  const [account, setAccount] = useState(userId ?? '')
  const [name, setName] = useState('')
  const [workspace, setWorkspace] = useState('')
  const [persona, setPersona] = useState('')
  const chosen = account || accounts.find((person) => person.kind === 'agent')?.id || accounts[0]?.id || ''

  function submit(event: SubmitEvent) {
    event.preventDefault()
    mint.mutate(
      {
        user_id: chosen,
        name: name.trim(),
        workspace: workspace || null,
        persona: persona.trim() || null,
      },
      { onSuccess: onMinted },
    )
  }

  return (
    <form onSubmit={submit} className="grid gap-4">
      <DialogHeader>
        <DialogTitle>Mint an API key</DialogTitle>
        <DialogDescription>
          The key acts as its account, with that account&apos;s role. Bind it to a workspace to keep it there.
        </DialogDescription>
      </DialogHeader>
      <Field id="key-account" label="Account">
        <NativeSelect id="key-account" value={chosen} onChange={(event) => { setAccount(event.target.value) }} required>
          {accounts.map((person) => (
            <option key={person.id} value={person.id}>
              {person.display_name || person.email} ({person.kind === 'agent' ? 'agent' : person.role})
            </option>
          ))}
        </NativeSelect>
      </Field>
      <Field id="key-name" label="Name" hint="Where the key lives: a laptop, a CI job, a bot.">
        <Input id="key-name" value={name} onChange={(event) => { setName(event.target.value) }} required maxLength={100} />
      </Field>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="key-workspace" label="Workspace" hint="Only this workspace, read and write.">
          <NativeSelect id="key-workspace" value={workspace} onChange={(event) => { setWorkspace(event.target.value) }}>
            <option value="">Every workspace</option>
            {workspaces.data?.items.map((entry) => (
              <option key={entry.slug} value={entry.slug}>{entry.title} ({entry.slug})</option>
            ))}
          </NativeSelect>
        </Field>
        <Field id="key-persona" label="Persona" hint="Optional: routes rag_* calls.">
          <Input id="key-persona" value={persona} onChange={(event) => { setPersona(event.target.value) }} maxLength={64} />
        </Field>
      </div>
      {mint.isError ? <Alert variant="destructive">{errorMessage(mint.error)}</Alert> : null}
      <DialogFooter>
        <Button type="submit" disabled={mint.isPending || !chosen || !name.trim()}>
          <KeyRound aria-hidden="true" />
          Mint key
        </Button>
      </DialogFooter>
    </form>
  )
}

function Minted({ minted, onDone }: { minted: ApiKeyCreated; onDone: () => void }) {
  return (
    <div className="grid gap-4">
      <DialogHeader>
        <DialogTitle>Key minted: {minted.name}</DialogTitle>
        <DialogDescription>
          For {minted.email}
          {minted.workspace ? `, bound to workspace ${minted.workspace}` : ''}
          {minted.persona ? `, persona ${minted.persona}` : ''}.
        </DialogDescription>
      </DialogHeader>
      <Alert>
        <span className="flex items-start gap-2">
          <TriangleAlert className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
          Copy it now: it is shown this once and never again.
        </span>
      </Alert>
      <CopyBlock text={minted.key} name="The new API key" label="Copy key" />
      <div className="grid gap-2">
        <h3 className="text-sm font-medium">Connect an agent with it</h3>
        <ClientSnippets apiKey={minted.key} />
      </div>
      <DialogFooter>
        <Button onClick={onDone}>Done</Button>
      </DialogFooter>
    </div>
  )
}
