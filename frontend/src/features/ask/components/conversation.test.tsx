import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { describe, expect, it } from 'vitest'

import { renderWithProviders } from '@/testing/render'
import { stubApi } from '@/testing/stub-api'

import { readEvents } from '../api/ask'
import { Conversation } from './conversation'

function stream(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      controller.close()
    },
  })
}

const DONE = {
  answer: 'Run make rollback [1].',
  citations: [
    {
      key: '[1]',
      document_id: 'd1',
      chunk_id: 'c7',
      title: 'Runbook',
      heading_path: ['Deploy', 'Rollback'],
      snippet: 'Run make rollback to return…',
      url: '/documents/d1#chunk-c7',
      workspace: 'handbook',
    },
  ],
  mode: 'fast',
  fell_back: false,
  extractive: false,
  chat_id: null,
  trace_id: 't1',
} as const

const SCRIPT = [
  'event: mode\ndata: {"mode": "fast", "reason": "asked"}\n\n',
  ': keep-alive\n\n',
  'event: step\ndata: {"kind": "search", "label": "search: \\"rollback\\"", "detail": null}\n\n',
  'event: token\r\ndata: {"text": "Run make "}\r\n\r',
  '\nevent: tok',
  'en\ndata: {"text": "rollback"}\n\n',
  `event: done\ndata: ${JSON.stringify(DONE)}\n\n`,
]

describe('readEvents', () => {
  it('parses events split anywhere across reads, skipping comments', async () => {
    const events = []
    for await (const event of readEvents(stream(SCRIPT))) events.push(event.event)
    expect(events).toEqual(['mode', 'step', 'token', 'token', 'done'])
  })
})

/** The requests the panel sent, in order (the typed client hands fetch a `Request`). */
function sent(fetchMock: ReturnType<typeof stubApi>): Request[] {
  return fetchMock.mock.calls.map(([request]) => request as Request)
}

function renderPanel({ canSaveNotes = false }: { canSaveNotes?: boolean } = {}) {
  const router = createMemoryRouter(
    [{ path: '/', element: <Conversation documentId="d1" documentTitle="Runbook" canSaveNotes={canSaveNotes} /> }],
    { initialEntries: ['/'] },
  )
  return renderWithProviders(<RouterProvider router={router} />)
}

describe('Conversation scoped to a document', () => {
  it('asks about this document only and shows steps, the answer and its citation chips', async () => {
    const fetchMock = stubApi({ '/api/ask': { post: { status: 200, stream: SCRIPT } } })
    renderPanel()

    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'How do I roll back?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))

    const answer = await screen.findByTestId('answer')
    await waitFor(() => { expect(answer).toHaveTextContent('Run make rollback 1.') })
    const [request] = sent(fetchMock)
    expect(request?.method).toBe('POST')
    expect(new URL(request?.url ?? '').pathname).toBe('/api/ask')
    expect(request?.headers.get('Accept')).toBe('text/event-stream')
    expect(await request?.json()).toEqual({
      question: 'How do I roll back?',
      mode: 'auto',
      document_ids: ['d1'],
      writes: 'off',
    })
    // Once the answer is in, its steps fold into the trace.
    expect(within(screen.getByRole('list', { name: 'Trace' })).getByText(/rollback/)).toBeInTheDocument()
    expect(screen.getByTestId('mode')).toHaveTextContent('fast')
    expect(screen.getByTestId('mode')).toHaveTextContent('asked')
    const chip = within(answer).getByRole('link', { name: 'Source 1: Runbook' })
    expect(chip).toHaveAttribute('href', '/documents/d1#chunk-c7')
    expect(screen.getByRole('button', { name: 'Ask' })).toBeInTheDocument()
    // Focused, the chip previews the passage: its document, where it sits, its workspace.
    fireEvent.focus(chip)
    const preview = await screen.findByTestId('citation-preview')
    expect(preview).toHaveTextContent('Runbook')
    expect(preview).toHaveTextContent('Workspace handbook')
  })

  it('shows the server’s error event and a refused request clearly', async () => {
    stubApi({
      '/api/ask': {
        post: {
          status: 200,
          stream: ['event: error\ndata: {"code": "unavailable", "message": "The model is down."}\n\n'],
        },
      },
    })
    renderPanel()
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Why?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    expect(await screen.findByRole('alert')).toHaveTextContent('The model is down.')

    // Refused before any stream: the API's error body, as every other call reports it.
    stubApi({
      '/api/ask': {
        post: {
          status: 422,
          body: { error: { code: 'validation_failed', message: 'No workspace left to search.' } },
        },
      },
    })
    await screen.findByRole('button', { name: 'Ask' })
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Why?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await waitFor(() => {
      expect(screen.getAllByRole('alert').at(-1)).toHaveTextContent('No workspace left to search.')
    })
  })

  it('stops a streaming answer, keeping what came', async () => {
    const fetchMock = stubApi({
      '/api/ask': {
        post: {
          status: 200,
          open: true,
          stream: [
            'event: mode\ndata: {"mode": "fast", "reason": "asked"}\n\n',
            'event: step\ndata: {"kind": "search", "label": "search: \\"rollback\\"", "detail": "3 passages"}\n\n',
            'event: token\ndata: {"text": "Run make "}\n\n',
          ],
        },
      },
    })
    renderPanel()
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'How do I roll back?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    const answer = await screen.findByTestId('answer')
    await waitFor(() => { expect(answer).toHaveTextContent('Run make') })

    // While it streams, the steps so far show live above the preview.
    expect(screen.getByTestId('answer')).toHaveAttribute('data-status', 'streaming')
    expect(within(screen.getByRole('list', { name: 'Steps' })).getByText(/3 passages/)).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }))
    expect(await screen.findByRole('button', { name: 'Ask' })).toBeInTheDocument()
    expect(screen.getByRole('status')).toHaveTextContent('Stopped')
    expect(sent(fetchMock)[0]?.signal.aborted).toBe(true)
    expect(screen.getByTestId('answer')).toHaveTextContent('Run make')
    expect(screen.queryByRole('alert')).not.toBeInTheDocument()
  })

  it('stops a deep run kept in its chat on the server, not only by leaving its stream', async () => {
    const fetchMock = stubApi({
      '/api/ask': {
        post: {
          status: 200,
          open: true,
          stream: ['event: mode\ndata: {"mode": "deep", "reason": "asked", "run_id": "r1", "chat_id": "c1"}\n\n'],
        },
      },
      '/api/runs/{run_id}/cancel': { post: { status: 204, raw: '' } },
      '/api/chats/{chat_id}': {
        get: {
          status: 200,
          body: {
            id: 'c1',
            title: 'Why?',
            created_at: '2026-12-06T06:00:00Z',
            updated_at: '2026-12-06T06:00:00Z',
            messages: [],
            runs: [{ id: 'r1', question: 'Why?', status: 'running', error: null, created_at: '2026-12-06T06:00:00Z' }],
          },
        },
      },
    })
    renderPanel()
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Why?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await waitFor(() => { expect(screen.getByTestId('mode')).toHaveTextContent('deep') })
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }))
    expect(await screen.findByRole('button', { name: 'Ask' })).toBeInTheDocument()
    await waitFor(() => {
      expect(sent(fetchMock).map((r) => `${r.method} ${new URL(r.url).pathname}`)).toContain('POST /api/runs/r1/cancel')
    })
    // The chat's own record of the run this page follows is not shown twice.
    expect(screen.queryByText(/Still researching/)).not.toBeInTheDocument()
    expect(screen.getAllByText('Why?')).toHaveLength(1)
  })

  it('lets the agent write only when the person turns notes on, and shares only when asked', async () => {
    const fetchMock = stubApi({ '/api/ask': { post: { status: 200, stream: SCRIPT } } })
    renderPanel({ canSaveNotes: true })
    const notes = screen.getByRole('switch', { name: /save a note/ })
    expect(notes).not.toBeChecked()
    expect(screen.queryByRole('switch', { name: /Share it/ })).not.toBeInTheDocument()

    fireEvent.click(notes)
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Sum it up' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await screen.findByTestId('answer')
    expect(await sent(fetchMock)[0]?.json()).toMatchObject({ writes: 'private' })

    await screen.findByRole('button', { name: 'Ask' })
    fireEvent.click(screen.getByRole('switch', { name: /Share it/ }))
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'And again' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await waitFor(() => { expect(fetchMock).toHaveBeenCalledTimes(2) })
    expect(await sent(fetchMock)[1]?.json()).toMatchObject({ writes: 'org' })
  })

  it('offers no note switch to someone who may not write', () => {
    stubApi({})
    renderPanel()
    expect(screen.queryByRole('switch', { name: /save a note/ })).not.toBeInTheDocument()
  })

  it('checks the question before sending anything', () => {
    const fetchMock = stubApi({})
    renderPanel()
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    expect(screen.getByRole('alert')).toHaveTextContent('Type a question first.')
    expect(fetchMock).not.toHaveBeenCalled()
  })
})
