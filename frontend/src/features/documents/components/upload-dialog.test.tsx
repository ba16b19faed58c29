import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { describe, expect, it, vi } from 'vitest'

import { renderWithProviders } from '@/testing/render'
import { stubApi, type StubRoutes } from '@/testing/stub-api'

import { UploadDialog } from './upload-dialog'

const WORKSPACES: StubRoutes = {
  '/api/workspaces': {
    get: {
      status: 200,
      body: {
        items: [
          {
            id: 'w1',
            slug: 'default',
            title: 'Default',
            description: '',
            license: null,
            tier: 'community',
            document_count: 0,
            created_at: '2026-12-01T00:00:00Z',
            updated_at: '2026-12-01T00:00:00Z',
          },
        ],
        next_cursor: null,
      },
    },
  },
}

/** An XMLHttpRequest that reports progress, then answers: 201 for most files, the API's 422
 *  for a file named `refused.md`. It records what was sent. */
class ScriptedXhr {
  static sent: FormData[] = []
  static inFlight = 0
  static mostInFlight = 0
  status = 0
  response: unknown = null
  responseType = ''
  upload: { onprogress: ((event: { lengthComputable: boolean; loaded: number; total: number }) => void) | null } = {
    onprogress: null,
  }
  onload: (() => void) | null = null
  onerror: (() => void) | null = null
  onabort: (() => void) | null = null
  open() {}
  setRequestHeader() {}
  abort() {}
  send(form: FormData) {
    ScriptedXhr.sent.push(form)
    ScriptedXhr.inFlight += 1
    ScriptedXhr.mostInFlight = Math.max(ScriptedXhr.mostInFlight, ScriptedXhr.inFlight)
    const file = form.get('file') as File
    setTimeout(() => {
      this.upload.onprogress?.({ lengthComputable: true, loaded: 5, total: 10 })
      if (file.name === 'refused.md') {
        this.status = 422
        this.response = { error: { code: 'validation_error', message: 'content: the file has no text' } }
      } else if (file.name === 'same.md') {
        this.status = 200
        this.response = { id: 'doc-same', title: 'Same', unchanged: true, replaced: false, version: 1 }
      } else if (file.name === 'changed.md') {
        this.status = 200
        this.response = { id: 'doc-changed', title: 'Changed', unchanged: false, replaced: true, version: 3 }
      } else {
        this.status = 201
        this.response = { id: `doc-${file.name}`, title: file.name, unchanged: false }
      }
      ScriptedXhr.inFlight -= 1
      this.onload?.()
    }, 0)
  }
}

function renderDialog() {
  ScriptedXhr.sent = []
  ScriptedXhr.inFlight = 0
  ScriptedXhr.mostInFlight = 0
  vi.stubGlobal('XMLHttpRequest', ScriptedXhr)
  stubApi(WORKSPACES)
  const router = createMemoryRouter(
    [{ path: '/', element: <UploadDialog open onOpenChange={vi.fn()} /> }],
    { initialEntries: ['/'] },
  )
  return renderWithProviders(<RouterProvider router={router} />)
}

function choose(...files: File[]) {
  fireEvent.change(screen.getByLabelText('Files to upload'), { target: { files } })
}

describe('UploadDialog', () => {
  it('refuses an unsupported or empty file before sending, and says why for each', () => {
    renderDialog()
    choose(new File(['png'], 'diagram.png'), new File([], 'empty.md'))
    const list = screen.getByRole('list', { name: 'Files' })
    expect(within(list).getAllByRole('alert')).toHaveLength(2)
    expect(screen.getByRole('button', { name: 'Upload' })).toBeDisabled()
    expect(ScriptedXhr.sent).toHaveLength(0)
  })

  it('uploads each file with the chosen fields and shows the server’s refusal on its own row', async () => {
    renderDialog()
    choose(new File(['# A\n\ntext'], 'a.md'), new File(['   '], 'refused.md'))
    fireEvent.change(screen.getByLabelText('Tags'), { target: { value: 'Ops, runbook' } })
    fireEvent.change(screen.getByLabelText('Who can see it'), { target: { value: 'private' } })
    fireEvent.click(screen.getByRole('button', { name: 'Upload 2 files' }))

    const list = screen.getByRole('list', { name: 'Files' })
    await waitFor(() => { expect(list.querySelectorAll('li[data-state="done"]')).toHaveLength(1) })
    await waitFor(() => { expect(list.querySelectorAll('li[data-state="failed"]')).toHaveLength(1) })
    const failed = list.querySelector('li[data-state="failed"]') as HTMLElement
    expect(within(failed).getByText('refused.md')).toBeInTheDocument()
    expect(within(failed).getByRole('alert')).toHaveTextContent('content: the file has no text')
    expect(within(list).getByRole('link', { name: 'Open it' })).toHaveAttribute('href', '/documents/doc-a.md')

    expect(ScriptedXhr.sent).toHaveLength(2)
    const first = ScriptedXhr.sent[0]
    expect(first?.get('tags')).toBe('ops,runbook')
    expect(first?.get('visibility')).toBe('private')
    expect(first?.get('workspace')).toBe('default')
  })

  it('sends three files at a time, and says which were unchanged and which replaced', async () => {
    renderDialog()
    choose(
      new File(['# A'], 'a.md'),
      new File(['# B'], 'b.md'),
      new File(['# C'], 'c.md'),
      new File(['# Same'], 'same.md'),
      new File(['# Changed'], 'changed.md'),
    )
    fireEvent.click(screen.getByRole('button', { name: 'Upload 5 files' }))
    const list = screen.getByRole('list', { name: 'Files' })
    await waitFor(() => { expect(list.querySelectorAll('li[data-state="done"]')).toHaveLength(5) })
    expect(ScriptedXhr.mostInFlight).toBe(3)
    expect(within(list).getByText(/Already here, unchanged/)).toBeInTheDocument()
    expect(within(list).getByText(/Replaced: now version 3/)).toBeInTheDocument()
    expect(ScriptedXhr.sent.map((form) => form.get('source')).sort()).toEqual(['a.md', 'b.md', 'c.md', 'changed.md', 'same.md'])
    expect(ScriptedXhr.sent.every((form) => form.get('replace') === 'true')).toBe(true)
  })

  it('adds another document instead when asked to keep both', async () => {
    renderDialog()
    choose(new File(['# A'], 'a.md'))
    fireEvent.change(screen.getByLabelText('A file you uploaded before'), { target: { value: 'keep' } })
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }))
    const list = screen.getByRole('list', { name: 'Files' })
    await waitFor(() => { expect(list.querySelectorAll('li[data-state="done"]')).toHaveLength(1) })
    expect(ScriptedXhr.sent[0]?.get('replace')).toBeNull()
  })

  it('checks the tags before sending anything', () => {
    renderDialog()
    choose(new File(['text'], 'a.md'))
    fireEvent.change(screen.getByLabelText('Tags'), { target: { value: 'x'.repeat(65) } })
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }))
    expect(screen.getByText(/is not a tag/)).toBeInTheDocument()
    expect(ScriptedXhr.sent).toHaveLength(0)
  })
})
