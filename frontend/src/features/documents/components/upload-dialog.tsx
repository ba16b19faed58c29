import {
  CheckCircle2,
  CircleAlert,
  ClipboardPaste,
  FileUp,
  LoaderCircle,
  Upload,
  X,
} from 'lucide-react'
import { useRef, useState, type DragEvent, type SubmitEvent } from 'react'
import { Link } from 'react-router'
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
import { Progress } from '@/components/ui/progress'
import { ApiError, errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'
import { field } from '@/lib/form'
import { useWorkspaces } from '@/lib/workspaces'

import { useCreateDocument, useInvalidateDocuments } from '../api/documents'
import { sourceOf, uploadDocument, type UploadFields } from '../api/upload-document'
import { parseTags, tagsProblem } from '../lib/tags'

const SUPPORTED = ['md', 'markdown', 'txt', 'text', 'html', 'htm', 'pdf', 'docx']
// Files sent at once: enough to keep the server's conversion and embedding busy, few enough
// that one slow file does not hold the rest and the browser's connections stay free for the app.
const PARALLEL = 3

type Item = {
  key: string
  file: File
  state: 'ready' | 'uploading' | 'done' | 'failed'
  progress: number
  error?: string
  documentId?: string
  unchanged?: boolean
  replaced?: boolean
  version?: number
}

function extensionOf(name: string): string {
  return name.includes('.') ? (name.split('.').pop()?.toLowerCase() ?? '') : ''
}

function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/** A document to start from (the dashboard's "write this doc"): the dialog opens on pasting. */
export type Draft = { title: string; content: string }

export function UploadDialog({
  open,
  onOpenChange,
  defaultWorkspace,
  draft,
}: {
  open: boolean
  onOpenChange: (open: boolean) => void
  defaultWorkspace?: string
  draft?: Draft
}) {
  const [mode, setMode] = useState<'files' | 'paste'>(draft ? 'paste' : 'files')
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-2xl">
        <DialogHeader>
          <DialogTitle>Add documents</DialogTitle>
          <DialogDescription>
            Markdown, text, HTML, PDF or Word files are converted to Markdown, cut into chunks
            and indexed for search and answers.
          </DialogDescription>
        </DialogHeader>
        <div role="tablist" aria-label="How to add" className="grid grid-cols-2 gap-1 rounded-lg bg-muted p-1">
          {(
            [
              ['files', 'Upload files', FileUp],
              ['paste', 'Paste text', ClipboardPaste],
            ] as const
          ).map(([value, label, Icon]) => (
            <button
              key={value}
              type="button"
              role="tab"
              aria-selected={mode === value}
              onClick={() => { setMode(value) }}
              className={cn(
                'flex items-center justify-center gap-2 rounded-md px-3 py-1.5 text-sm font-medium transition-colors focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                mode === value ? 'bg-background shadow-xs' : 'text-muted-foreground hover:text-foreground',
              )}
            >
              <Icon className="size-4" aria-hidden="true" />
              {label}
            </button>
          ))}
        </div>
        {open ? (
          mode === 'files' ? (
            <FilesForm defaultWorkspace={defaultWorkspace} onClose={() => { onOpenChange(false) }} />
          ) : (
            <PasteForm defaultWorkspace={defaultWorkspace} draft={draft} onClose={() => { onOpenChange(false) }} />
          )
        ) : null}
      </DialogContent>
    </Dialog>
  )
}

function CommonFields({
  defaultWorkspace,
  tagsError,
}: {
  defaultWorkspace?: string | undefined
  tagsError?: string | undefined
}) {
  const workspaces = useWorkspaces()
  return (
    <div className="grid gap-4 sm:grid-cols-3">
      <Field id="upload-workspace" label="Workspace">
        <NativeSelect
          id="upload-workspace"
          name="workspace"
          defaultValue={defaultWorkspace ?? 'default'}
          disabled={!workspaces.data}
        >
          {(workspaces.data?.items ?? [{ slug: defaultWorkspace ?? 'default', title: '' }]).map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.title ? `${w.title} (${w.slug})` : w.slug}
            </option>
          ))}
        </NativeSelect>
      </Field>
      <Field id="upload-tags" label="Tags" hint="Separated by commas." error={tagsError}>
        <Input id="upload-tags" name="tags" placeholder="runbook, ops" aria-invalid={tagsError ? true : undefined} />
      </Field>
      <Field id="upload-visibility" label="Who can see it">
        <NativeSelect id="upload-visibility" name="visibility" defaultValue="org">
          <option value="org">Everyone</option>
          <option value="private">Only me</option>
        </NativeSelect>
      </Field>
    </div>
  )
}

function readCommon(form: FormData): UploadFields {
  return {
    workspace: field(form, 'workspace') || undefined,
    tags: parseTags(field(form, 'tags')),
    visibility: field(form, 'visibility') === 'private' ? 'private' : 'org',
  }
}

function FilesForm({ defaultWorkspace, onClose }: { defaultWorkspace?: string | undefined; onClose: () => void }) {
  const [items, setItems] = useState<Item[]>([])
  const [dragging, setDragging] = useState(false)
  const [tagsError, setTagsError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const folder = useRef<HTMLInputElement | null>(null)
  const invalidateDocuments = useInvalidateDocuments()

  function add(files: FileList | null, { fromFolder = false } = {}) {
    if (!files) return
    // A folder brings whatever it holds: what Corpus cannot read is left out quietly there,
    // while a file chosen by name says why it is refused.
    const chosen = [...files].filter((file) => !fromFolder || SUPPORTED.includes(extensionOf(file.name)))
    const added: Item[] = chosen.map((file) => {
      const extension = extensionOf(file.name)
      const problem = !SUPPORTED.includes(extension)
        ? `Not a supported type (.${extension || '?'}): use .md, .txt, .html, .pdf or .docx.`
        : file.size === 0
          ? 'The file is empty.'
          : undefined
      return {
        key: `${file.name}-${file.size}-${file.lastModified}-${Math.random()}`,
        file,
        state: problem ? 'failed' : 'ready',
        progress: 0,
        error: problem,
      }
    })
    setItems((current) => [...current.filter((item) => item.state !== 'done'), ...added])
  }

  function patch(key: string, change: Partial<Item>) {
    setItems((current) => current.map((item) => (item.key === key ? { ...item, ...change } : item)))
  }

  async function send(item: Item, fields: UploadFields): Promise<'added' | 'replaced' | 'unchanged' | 'failed'> {
    patch(item.key, { state: 'uploading', progress: 0 })
    try {
      const result = await uploadDocument(item.file, fields, (fraction) => {
        patch(item.key, { progress: fraction * 100 })
      })
      patch(item.key, {
        state: 'done',
        progress: 100,
        documentId: result.id,
        unchanged: result.unchanged ?? false,
        replaced: result.replaced ?? false,
        version: result.version,
      })
      return result.unchanged ? 'unchanged' : result.replaced ? 'replaced' : 'added'
    } catch (error) {
      patch(item.key, {
        state: 'failed',
        error:
          error instanceof ApiError
            ? error.message
            : 'Could not reach the server. Check your connection and try again.',
      })
      return 'failed'
    }
  }

  async function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const fields = { ...readCommon(form), replace: field(form, 'existing') !== 'keep' }
    const problem = tagsProblem(fields.tags)
    setTagsError(problem)
    if (problem) return
    setBusy(true)
    // Each file is its own request and, on the server, its own transaction: a tab closed
    // half-way keeps the files that finished, whole, and nothing of the others.
    const queue = items.filter((i) => i.state === 'ready')
    const counts = { added: 0, replaced: 0, unchanged: 0, failed: 0 }
    async function worker() {
      for (let item = queue.shift(); item; item = queue.shift()) {
        counts[await send(item, fields)] += 1
      }
    }
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker))
    setBusy(false)
    if (counts.added || counts.replaced) {
      const said = [
        counts.added ? `${counts.added} added` : '',
        counts.replaced ? `${counts.replaced} replaced` : '',
        counts.unchanged ? `${counts.unchanged} unchanged` : '',
      ].filter(Boolean)
      toast.success(`Documents: ${said.join(', ')}`)
      await invalidateDocuments()
    }
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault()
    setDragging(false)
    add(event.dataTransfer.files)
  }

  const ready = items.filter((i) => i.state === 'ready').length
  return (
    <form noValidate onSubmit={(event) => { void submit(event) }} className="grid gap-4" aria-label="Upload files">
      <div
        onDragOver={(event) => {
          event.preventDefault()
          setDragging(true)
        }}
        onDragLeave={() => { setDragging(false) }}
        onDrop={onDrop}
        data-testid="dropzone"
        className={cn(
          'flex flex-col items-center gap-2 rounded-xl border-2 border-dashed px-6 py-8 text-center transition-colors',
          dragging ? 'border-primary bg-primary/5' : 'border-border',
        )}
      >
        <Upload className="size-6 text-muted-foreground" aria-hidden="true" />
        <p className="text-sm">
          Drop files here, or{' '}
          <button
            type="button"
            onClick={() => input.current?.click()}
            className="font-medium text-primary underline underline-offset-4 focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
          >
            choose files
          </button>{' '}
          or{' '}
          <button
            type="button"
            onClick={() => folder.current?.click()}
            className="font-medium text-primary underline underline-offset-4 focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
          >
            a folder
          </button>
        </p>
        <p className="text-xs text-muted-foreground">
          .md .txt .html .pdf .docx — several at once. A folder keeps its paths, so links between
          its files work.
        </p>
        <input
          ref={input}
          type="file"
          multiple
          className="sr-only"
          aria-label="Files to upload"
          accept={SUPPORTED.map((e) => `.${e}`).join(',')}
          onChange={(event) => {
            add(event.target.files)
            event.target.value = ''
          }}
        />
        <input
          ref={(element) => {
            folder.current = element
            // Not in React's attribute types; every browser this app supports reads it.
            element?.setAttribute('webkitdirectory', '')
          }}
          type="file"
          multiple
          className="sr-only"
          aria-label="Folder to upload"
          onChange={(event) => {
            add(event.target.files, { fromFolder: true })
            event.target.value = ''
          }}
        />
      </div>

      {items.length ? (
        <ul className="grid max-h-60 gap-2 overflow-y-auto" aria-label="Files">
          {items.map((item) => (
            <li key={item.key} className="grid gap-1.5 rounded-lg border p-3" data-state={item.state}>
              <div className="flex items-center gap-2 text-sm">
                {item.state === 'done' ? (
                  <CheckCircle2 className="size-4 shrink-0 text-success" aria-hidden="true" />
                ) : item.state === 'failed' ? (
                  <CircleAlert className="size-4 shrink-0 text-destructive" aria-hidden="true" />
                ) : item.state === 'uploading' ? (
                  <LoaderCircle className="size-4 shrink-0 animate-spin text-primary" aria-hidden="true" />
                ) : (
                  <FileUp className="size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
                )}
                <span className="min-w-0 flex-1 truncate font-medium">{sourceOf(item.file)}</span>
                <span className="shrink-0 text-xs text-muted-foreground">{sizeLabel(item.file.size)}</span>
                {item.state === 'ready' || item.state === 'failed' ? (
                  <button
                    type="button"
                    aria-label={`Remove ${item.file.name}`}
                    className="rounded p-0.5 text-muted-foreground hover:bg-muted hover:text-foreground"
                    onClick={() => { setItems((current) => current.filter((i) => i.key !== item.key)) }}
                  >
                    <X className="size-3.5" aria-hidden="true" />
                  </button>
                ) : null}
              </div>
              {item.state === 'uploading' ? (
                <Progress value={item.progress} label={`Uploading ${item.file.name}`} />
              ) : null}
              {item.state === 'failed' ? (
                <p role="alert" className="text-xs text-destructive">
                  {item.error}
                </p>
              ) : null}
              {item.state === 'done' && item.documentId ? (
                <p className="text-xs text-muted-foreground">
                  {item.unchanged
                    ? 'Already here, unchanged. '
                    : item.replaced
                      ? `Replaced: now version ${item.version ?? ''}. `
                      : 'Added. '}
                  <Link to={`/documents/${item.documentId}`} className="text-primary underline underline-offset-4" onClick={onClose}>
                    Open it
                  </Link>
                </p>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}

      <CommonFields defaultWorkspace={defaultWorkspace} tagsError={tagsError} />
      <Field
        id="upload-existing"
        label="A file you uploaded before"
        hint="Found by its name (or its path in a folder) in the workspace. The same content is never added twice."
      >
        <NativeSelect id="upload-existing" name="existing" defaultValue="replace">
          <option value="replace">Replace it: its document gets a new version</option>
          <option value="keep">Keep both: add another document</option>
        </NativeSelect>
      </Field>
      <DialogFooter>
        <Button variant="outline" onClick={onClose}>
          {items.some((i) => i.state === 'done') && !ready ? 'Done' : 'Cancel'}
        </Button>
        <Button type="submit" disabled={busy || ready === 0}>
          {busy ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : <Upload aria-hidden="true" />}
          {ready > 1 ? `Upload ${ready} files` : 'Upload'}
        </Button>
      </DialogFooter>
    </form>
  )
}

function PasteForm({
  defaultWorkspace,
  draft,
  onClose,
}: {
  defaultWorkspace?: string | undefined
  draft?: Draft | undefined
  onClose: () => void
}) {
  const create = useCreateDocument()
  const [errors, setErrors] = useState<{ title?: string; content?: string; tags?: string }>({})

  function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const common = readCommon(form)
    const title = field(form, 'title').trim()
    const content = field(form, 'content')
    const found = {
      title: title ? undefined : 'Give it a title.',
      content: content.trim() ? undefined : 'Paste or type some content.',
      tags: tagsProblem(common.tags),
    }
    setErrors(found)
    if (Object.values(found).some(Boolean)) return
    create.mutate(
      { title, content, tags: common.tags, visibility: common.visibility, workspace: common.workspace ?? null },
      {
        onSuccess: (created) => {
          toast.success(created.unchanged ? 'Already here, unchanged' : `“${created.title}” added`)
          onClose()
        },
      },
    )
  }

  return (
    <form noValidate onSubmit={submit} className="grid gap-4" aria-label="Paste text">
      {create.isError ? <Alert variant="destructive">{errorMessage(create.error)}</Alert> : null}
      <Field id="paste-title" label="Title" error={errors.title}>
        <Input id="paste-title" name="title" defaultValue={draft?.title} aria-invalid={errors.title ? true : undefined} />
      </Field>
      <Field id="paste-content" label="Content (Markdown)" error={errors.content}>
        <Textarea
          id="paste-content"
          name="content"
          defaultValue={draft?.content}
          className="min-h-40 font-mono text-xs"
          placeholder={'# Heading\n\nWrite or paste Markdown here.'}
          aria-invalid={errors.content ? true : undefined}
        />
      </Field>
      <CommonFields defaultWorkspace={defaultWorkspace} tagsError={errors.tags} />
      <DialogFooter>
        <Button variant="outline" onClick={onClose}>
          Cancel
        </Button>
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : null}
          Add document
        </Button>
      </DialogFooter>
    </form>
  )
}
