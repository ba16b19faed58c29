import { LoaderCircle, RefreshCw } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import { Input, NativeSelect, Textarea } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { errorMessage } from '@/lib/api-client'
import { field } from '@/lib/form'

import { useDocument, useUpdateDocument, type DocumentUpdate } from '../api/documents'
import { parseTags, tagsProblem } from '../lib/tags'

type Errors = { title?: string; tags?: string; content?: string }

export function EditDocumentDialog({
  id,
  open,
  onOpenChange,
}: {
  id: string
  open: boolean
  onOpenChange: (open: boolean) => void
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-2xl">
        <DialogHeader>
          <DialogTitle>Edit document</DialogTitle>
          <DialogDescription>
            Title, tags and visibility change at once; new content is chunked and indexed again.
          </DialogDescription>
        </DialogHeader>
        {open ? <EditForm id={id} onDone={() => { onOpenChange(false) }} /> : null}
      </DialogContent>
    </Dialog>
  )
}

function EditForm({ id, onDone }: { id: string; onDone: () => void }) {
  const document = useDocument(id)
  const update = useUpdateDocument(id)
  const [content, setContent] = useState<string | null>(null)
  const [errors, setErrors] = useState<Errors>({})

  if (document.isPending) return <p className="text-sm text-muted-foreground">Loading…</p>
  if (document.isError) return <Alert variant="destructive">{errorMessage(document.error)}</Alert>
  const doc = document.data
  const text = content ?? doc.content
  const rechunk = text !== doc.content

  function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const title = field(form, 'title').trim()
    const tags = parseTags(field(form, 'tags'))
    const visibility = field(form, 'visibility') === 'private' ? 'private' : 'org'
    const found: Errors = {
      title: title ? (title.length > 500 ? 'Use at most 500 characters.' : undefined) : 'Give it a title.',
      tags: tagsProblem(tags),
      content: text.trim() ? undefined : 'A document needs some content.',
    }
    setErrors(found)
    if (Object.values(found).some(Boolean)) return
    const body: DocumentUpdate = {}
    if (title !== doc.title) body.title = title
    if (tags.join(',') !== doc.tags.join(',')) body.tags = tags
    if (visibility !== doc.visibility) body.visibility = visibility
    if (rechunk) body.content = text
    if (Object.keys(body).length === 0) {
      onDone()
      return
    }
    update.mutate(body, {
      onSuccess: (saved) => {
        toast.success(
          rechunk ? `Saved and re-chunked into ${saved.chunk_count} chunks` : 'Changes saved',
        )
        onDone()
      },
    })
  }

  return (
    <form noValidate onSubmit={submit} className="grid gap-4" aria-label="Edit document">
      {update.isError ? <Alert variant="destructive">{errorMessage(update.error)}</Alert> : null}
      <Field id="edit-title" label="Title" error={errors.title}>
        <Input id="edit-title" name="title" defaultValue={doc.title} aria-invalid={errors.title ? true : undefined} />
      </Field>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="edit-tags" label="Tags" hint="Separated by commas." error={errors.tags}>
          <Input id="edit-tags" name="tags" defaultValue={doc.tags.join(', ')} aria-invalid={errors.tags ? true : undefined} />
        </Field>
        <Field id="edit-visibility" label="Who can see it">
          <NativeSelect id="edit-visibility" name="visibility" defaultValue={doc.visibility}>
            <option value="org">Everyone</option>
            <option value="private">Only me</option>
          </NativeSelect>
        </Field>
      </div>
      <Field id="edit-content" label="Content (Markdown)" error={errors.content}>
        <Textarea
          id="edit-content"
          name="content"
          value={text}
          onChange={(event) => { setContent(event.target.value) }}
          className="min-h-64 font-mono text-xs"
          aria-invalid={errors.content ? true : undefined}
        />
      </Field>
      {rechunk ? (
        <Alert variant="info" data-testid="rechunk-note">
          <RefreshCw aria-hidden="true" />
          <p>
            The content changed: saving re-chunks and re-embeds the document (now {doc.chunk_count}{' '}
            chunks), and its version goes to v{doc.version + 1}. Links to its old chunks stop
            pointing at a chunk.
          </p>
        </Alert>
      ) : null}
      <DialogFooter>
        <Button variant="outline" onClick={onDone}>
          Cancel
        </Button>
        <Button type="submit" disabled={update.isPending}>
          {update.isPending ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : null}
          Save changes
        </Button>
      </DialogFooter>
    </form>
  )
}
