import { TriangleAlert } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import {
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import { Input, NativeSelect, Textarea } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { errorMessage } from '@/lib/api-client'
import type { Workspace } from '@/lib/workspaces'

import { useCreateWorkspace, useUpdateWorkspace, type WorkspaceUpdate } from '../api/workspaces'

type Tier = Workspace['tier']

// A few common SPDX ids to pick from; any other SPDX id may be typed.
const COMMON_LICENSES = ['Apache-2.0', 'MIT', 'BSD-3-Clause', 'CC-BY-4.0', 'CC-BY-SA-4.0', 'CC0-1.0', 'GPL-3.0-only']

/** Create a workspace, or edit one (`workspace` given): title, license (SPDX or proprietary,
 *  or from policy), tier, and a remote server's URL and key. */
export function WorkspaceForm({ workspace, onDone }: { workspace?: Workspace | undefined; onDone: () => void }) {
  const create = useCreateWorkspace()
  const update = useUpdateWorkspace()
  const [slug, setSlug] = useState(workspace?.slug ?? '')
  const [title, setTitle] = useState(workspace?.title ?? '')
  const [description, setDescription] = useState(workspace?.description ?? '')
  const initialLicense = workspace?.license ?? null
  const [licenseKind, setLicenseKind] = useState<'policy' | 'proprietary' | 'spdx'>(
    initialLicense === null ? 'policy' : initialLicense === 'PROPRIETARY' ? 'proprietary' : 'spdx',
  )
  const [spdx, setSpdx] = useState(initialLicense && initialLicense !== 'PROPRIETARY' ? initialLicense : '')
  const [tier, setTier] = useState<Tier>(workspace?.tier ?? 'community')
  const [remote, setRemote] = useState(Boolean(workspace?.remote_url))
  const [remoteUrl, setRemoteUrl] = useState(workspace?.remote_url ?? '')
  const [remoteToken, setRemoteToken] = useState('')
  const pending = create.isPending || update.isPending
  const error = create.error ?? update.error

  const license = licenseKind === 'policy' ? null : licenseKind === 'proprietary' ? 'PROPRIETARY' : spdx.trim()

  function submit(event: SubmitEvent) {
    event.preventDefault()
    const done = {
      onSuccess: () => {
        toast.success(workspace ? `${title} is saved` : `Workspace ${slug} is created`)
        onDone()
      },
    }
    if (workspace) {
      const body: WorkspaceUpdate = { title: title.trim(), description, license, tier }
      if (remote) {
        body.remote_url = remoteUrl.trim()
        if (remoteToken) body.remote_token = remoteToken
      } else if (workspace.remote_url) {
        body.remote_url = null
      }
      update.mutate({ slug: workspace.slug, body }, done)
    } else {
      create.mutate(
        {
          slug: slug.trim(),
          title: title.trim(),
          description,
          license,
          tier,
          ...(remote ? { remote_url: remoteUrl.trim(), remote_token: remoteToken || null } : {}),
        },
        done,
      )
    }
  }

  return (
    <form onSubmit={submit} className="grid gap-4">
      <DialogHeader>
        <DialogTitle>{workspace ? `Edit ${workspace.slug}` : 'New workspace'}</DialogTitle>
        <DialogDescription>
          A workspace holds documents under one license; personas route questions to workspaces.
        </DialogDescription>
      </DialogHeader>
      {workspace ? null : (
        <Field id="ws-slug" label="Name" hint="Lower case letters, digits, - and _: used in URLs, keys and the policy.">
          <Input id="ws-slug" value={slug} onChange={(event) => { setSlug(event.target.value) }} required pattern="[a-z0-9][a-z0-9_\-]{1,63}" autoComplete="off" />
        </Field>
      )}
      <Field id="ws-title" label="Title">
        <Input id="ws-title" value={title} onChange={(event) => { setTitle(event.target.value) }} required maxLength={300} />
      </Field>
      <Field id="ws-description" label="Description">
        <Textarea id="ws-description" value={description} onChange={(event) => { setDescription(event.target.value) }} maxLength={4000} className="min-h-16" />
      </Field>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="ws-license-kind" label="License">
          <NativeSelect id="ws-license-kind" value={licenseKind} onChange={(event) => { setLicenseKind(event.target.value as typeof licenseKind) }}>
            <option value="policy">From the policy</option>
            <option value="spdx">An open license (SPDX id)</option>
            <option value="proprietary">Proprietary</option>
          </NativeSelect>
        </Field>
        <Field id="ws-tier" label="Tier">
          <NativeSelect id="ws-tier" value={tier} onChange={(event) => { setTier(event.target.value as Tier) }}>
            <option value="core">Core</option>
            <option value="reference">Reference</option>
            <option value="community">Community</option>
          </NativeSelect>
        </Field>
      </div>
      {licenseKind === 'spdx' ? (
        <Field id="ws-spdx" label="SPDX id" hint="As in the SPDX list: Apache-2.0, MIT, CC-BY-4.0…">
          <Input id="ws-spdx" list="ws-spdx-ids" value={spdx} onChange={(event) => { setSpdx(event.target.value) }} required pattern="[A-Za-z0-9][A-Za-z0-9.+\-]{0,63}" />
          <datalist id="ws-spdx-ids">
            {COMMON_LICENSES.map((id) => <option key={id} value={id} />)}
          </datalist>
        </Field>
      ) : null}
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={remote} onChange={(event) => { setRemote(event.target.checked) }} />
        Searched on another server (a remote workspace)
      </label>
      {remote ? (
        <div className="grid gap-4 rounded-lg border p-3">
          <Field id="ws-remote-url" label="Remote URL" hint="Another Corpus, or an Anvil-compatible server: public addresses only.">
            <Input id="ws-remote-url" type="url" value={remoteUrl} onChange={(event) => { setRemoteUrl(event.target.value) }} required placeholder="https://kb.partner.example" />
          </Field>
          <Field
            id="ws-remote-token"
            label="Remote key"
            hint={workspace?.remote_url ? 'Leave empty to keep the stored one; it is never shown.' : 'Stored encrypted and never shown again.'}
          >
            <Input id="ws-remote-token" type="password" value={remoteToken} onChange={(event) => { setRemoteToken(event.target.value) }} autoComplete="off" />
          </Field>
          <Alert>
            <span className="flex items-start gap-2">
              <TriangleAlert className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
              Everyone who may read this workspace searches with this key and sees what it sees. Use a
              key of a dedicated agent account that sees only what all of them may see.
            </span>
          </Alert>
        </div>
      ) : null}
      {error ? <Alert variant="destructive">{errorMessage(error)}</Alert> : null}
      <DialogFooter>
        <Button type="submit" disabled={pending}>{workspace ? 'Save' : 'Create workspace'}</Button>
      </DialogFooter>
    </form>
  )
}
