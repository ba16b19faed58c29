import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { describe, expect, it, vi } from 'vitest'

import { renderWithProviders } from '@/testing/render'

import { readEvents } from '../api/ask'
import { AskPanel } from './ask-panel'

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
    },
  ],
  mode: 'fast',
  fell_back: false,
  extractive: false,
  chat_id: null,
  trace_id: 't1',
}

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

function renderPanel({ canSaveNotes = false }: { canSaveNotes?: boolean } = {}) {
  const router = createMemoryRouter(
    [{ path: '/', element: <AskPanel documentId="d1" title="Runbook" canSaveNotes={canSaveNotes} /> }],
    { initialEntries: ['/'] },
  )
  return renderWithProviders(<RouterProvider router={router} />)
}

describe('AskPanel', () => {
  it('asks about this document only and shows steps, the answer and its citation chips', async () => {
    const fetchMock = vi.fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>(() =>
      Promise.resolve(
        new Response(stream(SCRIPT), { headers: { 'Content-Type': 'text/event-stream' } }),
      ),
    )
    vi.stubGlobal('fetch', fetchMock)
    renderPanel()

    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'How do I roll back?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))

    const answer = await screen.findByTestId('answer')
    await waitFor(() => { expect(answer).toHaveTextContent('Run make rollback 1.') })
    const [url, init] = fetchMock.mock.calls[0] ?? []
    expect(url).toBe('/api/ask')
    expect(JSON.parse(init?.body as string)).toEqual({
      question: 'How do I roll back?',
      mode: 'fast',
      document_ids: ['d1'],
    })
    expect(within(screen.getByRole('list', { name: 'Steps' })).getByText(/rollback/)).toBeInTheDocument()
    const chip = within(answer).getByRole('link', { name: '1' })
    expect(chip).toHaveAttribute('href', '/documents/d1#chunk-c7')
    expect(screen.getByRole('button', { name: 'Ask' })).toBeInTheDocument()
  })

  it('shows the server’s error event and a refused request clearly', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() =>
        Promise.resolve(
          new Response(stream(['event: error\ndata: {"code": "unavailable", "message": "The model is down."}\n\n'])),
        ),
      ),
    )
    renderPanel()
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Why?' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    expect(await screen.findByRole('alert')).toHaveTextContent('The model is down.')
  })

  it('lets the agent write only when the person turns notes on, and shares only when asked', async () => {
    const fetchMock = vi.fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>(() =>
      Promise.resolve(new Response(stream(SCRIPT), { headers: { 'Content-Type': 'text/event-stream' } })),
    )
    vi.stubGlobal('fetch', fetchMock)
    renderPanel({ canSaveNotes: true })
    const notes = screen.getByRole('switch', { name: /save a note/ })
    expect(notes).not.toBeChecked()
    expect(screen.queryByRole('switch', { name: /Share it/ })).not.toBeInTheDocument()

    fireEvent.click(notes)
    fireEvent.change(screen.getByLabelText('Your question'), { target: { value: 'Sum it up' } })
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await screen.findByTestId('answer')
    expect(JSON.parse(fetchMock.mock.calls[0]?.[1]?.body as string)).toMatchObject({ writes: 'private' })

    await screen.findByRole('button', { name: 'Ask' })
    fireEvent.click(screen.getByRole('switch', { name: /Share it/ }))
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    await waitFor(() => { expect(fetchMock).toHaveBeenCalledTimes(2) })
    expect(JSON.parse(fetchMock.mock.calls[1]?.[1]?.body as string)).toMatchObject({ writes: 'org' })
  })

  it('offers no note switch to someone who may not write', () => {
    vi.stubGlobal('fetch', vi.fn())
    renderPanel()
    expect(screen.queryByRole('switch', { name: /save a note/ })).not.toBeInTheDocument()
  })

  it('checks the question before sending anything', () => {
    const fetchMock = vi.fn()
    vi.stubGlobal('fetch', fetchMock)
    renderPanel()
    fireEvent.click(screen.getByRole('button', { name: 'Ask' }))
    expect(screen.getByRole('alert')).toHaveTextContent('Type a question first.')
    expect(fetchMock).not.toHaveBeenCalled()
  })
})
