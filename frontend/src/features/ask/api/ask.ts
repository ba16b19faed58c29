/**
 * `POST /api/ask` streams Server-Sent Events (API.md, "Asking"): `mode`, then `step` and
 * `token` events, then `done` (the authoritative answer and its citations) or `error`. It goes
 * through the typed client like every other call, with the body as a stream: EventSource
 * cannot POST, so the events are parsed here from the bytes.
 */
import { api, unwrap } from '@/lib/api-client'
import type { components, paths } from '@/lib/api/schema'

type Schemas = components['schemas']

export type AskRequest = Schemas['AskRequest']
export type Citation = Schemas['Citation']
export type Step = Schemas['Step']

/** The events the schema declares for the stream (`event:` names). */
type EventName = paths['/api/ask']['post']['responses'][200]['content']['text/event-stream']['event']

/** Each event's `data:`, as the schema's models: a name the schema adds without a model here
 *  is a type error. */
type EventData = {
  mode: Schemas['ModeEvent']
  step: Schemas['Step']
  token: Schemas['TokenEvent']
  done: Schemas['DoneEvent']
  error: Schemas['ErrorEvent']
}

export type AskEvent = { [E in EventName]: { event: E; data: EventData[E] } }[EventName]

const EVENT_NAMES: Record<EventName, true> = {
  mode: true,
  step: true,
  token: true,
  done: true,
  error: true,
}

function isEventName(name: string): name is EventName {
  return Object.hasOwn(EVENT_NAMES, name)
}

/** Parse an SSE byte stream into events: blocks split by a blank line, `event:` names the
 *  event, `data:` lines are joined by newlines; comments (`:`) and unknown events are skipped.
 *  No body at all yields nothing (the caller reports an answer that never finished). */
export async function* readEvents(
  body: ReadableStream<Uint8Array> | null,
): AsyncGenerator<AskEvent> {
  if (!body) return
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
  if (!isEventName(name)) return null
  // The server writes each event's data from its model (app/routers/asking.py).
  return { event: name, data: payload } as AskEvent
}

/** Ask, and read the answer's events as they come. A refusal before the stream (401, 403,
 *  404, 413, 422 in the API's error shape) throws `ApiError`; aborting `signal` ends the
 *  request and its stream. */
export async function ask(
  body: AskRequest,
  signal: AbortSignal,
): Promise<AsyncGenerator<AskEvent>> {
  const stream = await unwrap(
    api.POST('/api/ask', {
      body,
      signal,
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
    }),
  )
  return readEvents(stream)
}
