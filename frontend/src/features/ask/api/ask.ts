/**
 * `POST /api/ask` streams Server-Sent Events (API.md, "Asking"): `mode`, then `step` and
 * `token` events, then `done` (the authoritative answer and its citations) or `error`.
 * EventSource cannot POST, so the stream is read from fetch's body.
 */
import { ApiError } from '@/lib/api-client'

export type Citation = {
  key: string
  document_id: string
  chunk_id: string
  title: string
  heading_path: string[]
  snippet: string
  url?: string | null
}

export type AskEvent =
  | { event: 'mode'; data: { mode: string; reason: string } }
  | { event: 'step'; data: { kind: string; label: string; detail?: string | null } }
  | { event: 'token'; data: { text: string } }
  | {
      event: 'done'
      data: {
        answer: string
        citations: Citation[]
        mode: string
        fell_back: boolean
        extractive: boolean
        chat_id?: string | null
        trace_id?: string | null
      }
    }
  | { event: 'error'; data: { code: string; message: string } }

export type AskInput = {
  question: string
  mode?: 'auto' | 'fast' | 'deep'
  document_ids?: string[]
  workspaces?: string[]
}

const KNOWN = new Set(['mode', 'step', 'token', 'done', 'error'])

/** Parse an SSE byte stream into events: blocks split by a blank line, `event:` names the
 *  event, `data:` lines are joined by newlines; comments (`:`) and unknown events are skipped. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<AskEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let pending = ''
  for (;;) {
    const { value, done } = await reader.read()
    // `stream: true` keeps a character split across two reads whole.
    const text = done ? decoder.decode() : decoder.decode(value, { stream: true })
    // A CR that ends a read may be half of a CRLF: it waits for the next read.
    let raw = pending + text
    pending = ''
    if (!done && raw.endsWith('\r')) {
      pending = '\r'
      raw = raw.slice(0, -1)
    }
    buffer += raw.replace(/\r\n?/g, '\n')
    let boundary = buffer.indexOf('\n\n')
    while (boundary >= 0) {
      const block = buffer.slice(0, boundary)
      buffer = buffer.slice(boundary + 2)
      const parsed = parseBlock(block)
      if (parsed) yield parsed
      boundary = buffer.indexOf('\n\n')
    }
    if (done) {
      const parsed = parseBlock(buffer)
      if (parsed) yield parsed
      return
    }
  }
}

function parseBlock(block: string): AskEvent | null {
  let name = 'message'
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'event') name = value
    else if (field === 'data') data.push(value)
  }
  if (data.length === 0) return null
  let payload: unknown
  try {
    payload = JSON.parse(data.join('\n'))
  } catch {
    return null
  }
  // A server may name events only inside the data (`{"type": "token", ...}`).
  if (name === 'message' && typeof payload === 'object' && payload && 'type' in payload) {
    name = String(payload.type)
  }
  if (!KNOWN.has(name)) return null
  return { event: name, data: payload } as AskEvent
}

export async function ask(input: AskInput, signal: AbortSignal): Promise<AsyncGenerator<AskEvent>> {
  const response = await globalThis.fetch('/api/ask', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
    signal,
  })
  if (!response.ok || !response.body) {
    const body: unknown = await response.json().catch(() => undefined)
    throw new ApiError(response.status, body)
  }
  return readEvents(response.body)
}
