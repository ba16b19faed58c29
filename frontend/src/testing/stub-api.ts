import { vi } from 'vitest'

import type { paths } from '@/lib/api/schema'

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch'

type MethodOf<P extends keyof paths> = {
  [M in Method]-?: paths[P][M] extends { responses: unknown } ? M : never
}[Method]

/** The answers the schema declares for one operation, each status with its own body: JSON, or
 *  an event stream. */
type DeclaredAnswer<Op> = Op extends { responses: infer R }
  ? {
      [S in keyof R]: S extends number
        ? R[S] extends { content: { 'application/json': infer Body } }
          ? { status: S; body: Body }
          : R[S] extends { content: { 'text/event-stream': unknown } }
            ? { status: S; stream: string[]; open?: boolean }
            : never
        : never
    }[keyof R]
  : never

/**
 * What a stubbed operation answers: a response the schema declares (type-checked against the
 * generated schema, so a fixture cannot disagree with the server), a `raw` body the schema does
 * not describe (a proxy's error page, an unhandled 500), or a failed fetch. A declared event
 * stream is its chunks of text, one per read; `open` keeps it open after them, as a run still
 * going, until the request is aborted.
 */
export type StubAnswer<Op> =
  | DeclaredAnswer<Op>
  | { status: number; raw: string }
  | { networkError: true }

type AnyAnswer =
  | { status: number; body: unknown }
  | { status: number; stream: string[]; open?: boolean }
  | { status: number; raw: string }
  | { networkError: true }

/** Answers by path template (as in the schema: `/api/documents/{document_id}`) and method. */
export type StubRoutes = {
  [P in keyof paths]?: { [M in MethodOf<P>]?: StubAnswer<paths[P][M]> }
}

function matches(template: string, path: string): boolean {
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^/}]+\}/g, '[^/]+')
  return new RegExp(`^${pattern}$`).test(path)
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  })
}

/** A streamed body, one chunk per read. As fetch does, aborting the request errors the body
 *  (a read waiting on an open stream included). */
function streamed(status: number, chunks: string[], open: boolean, signal: AbortSignal): Response {
  const encoder = new TextEncoder()
  const queue = [...chunks]
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      signal.addEventListener('abort', () => {
        controller.error(signal.reason)
      })
    },
    pull(controller) {
      const next = queue.shift()
      if (next !== undefined) controller.enqueue(encoder.encode(next))
      // Open and drained, nothing comes: the read waits, for an abort.
      else if (!open) controller.close()
    },
  })
  return new Response(body, { status, headers: { 'Content-Type': 'text/event-stream' } })
}

/**
 * Replace `globalThis.fetch` with a stub answering from `routes` (the backend does not run
 * under vitest). An operation with no stub answers 404 in the API's error shape, naming itself.
 * Restored after each test by `unstubGlobals`.
 */
export function stubApi(routes: StubRoutes) {
  function respond(request: Request): Response {
    // As fetch does: an aborted caller gets its AbortError, never an answer.
    request.signal.throwIfAborted()
    const path = new URL(request.url).pathname
    const operations: Partial<Record<string, AnyAnswer>> | undefined = Object.entries(routes).find(
      ([template]) => matches(template, path),
    )?.[1]
    const answer = operations?.[request.method.toLowerCase()]
    if (!answer) {
      return json(404, {
        error: { code: 'not_found', message: `no stub for ${request.method} ${path}` },
      })
    }
    if ('networkError' in answer) throw new TypeError('Failed to fetch')
    if ('raw' in answer) return new Response(answer.raw, { status: answer.status })
    if ('stream' in answer) {
      return streamed(answer.status, answer.stream, answer.open ?? false, request.signal)
    }
    return json(answer.status, answer.body)
  }

  // Settles later, as fetch does: a failure is a rejection, never a synchronous throw.
  const fetchMock = vi.fn((input: RequestInfo | URL, init?: RequestInit) =>
    Promise.resolve().then(() =>
      respond(input instanceof Request ? input : new Request(input, init)),
    ),
  )
  vi.stubGlobal('fetch', fetchMock)
  return fetchMock
}

/** The server's answers when everything is up (app/routers/health.py, app/system/service.py). */
export const healthy = {
  '/healthz': { get: { status: 200, body: { status: 'ok' } } },
  '/readyz': {
    get: {
      status: 200,
      body: {
        status: 'ready',
        checks: {
          database: { ok: true, detail: 'reachable' },
          migrations: { ok: true, detail: 'at 20260101_0001' },
          embeddings: { ok: true, detail: 'hash:hash-256 (256-d)' },
        },
      },
    },
  },
} satisfies StubRoutes
