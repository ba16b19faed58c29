import { vi } from 'vitest'

export type StubRoute = { status: number; body: unknown } | { networkError: true }

/**
 * Replace globalThis.fetch with a stub answering by path (the backend does not
 * run under vitest). Unknown paths answer 404. Restored by `unstubGlobals`.
 */
export function stubFetch(routes: Record<string, StubRoute>) {
  const fetchMock = vi.fn(async (input: RequestInfo | URL): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const path = new URL(url, 'http://localhost').pathname
    const route = routes[path]
    if (!route) return new Response(null, { status: 404 })
    if ('networkError' in route) throw new TypeError('Failed to fetch')
    return new Response(JSON.stringify(route.body), {
      status: route.status,
      headers: { 'Content-Type': 'application/json' },
    })
  })
  vi.stubGlobal('fetch', fetchMock)
  return fetchMock
}

export const healthy = {
  '/healthz': { status: 200, body: { status: 'ok' } },
  '/readyz': { status: 200, body: { status: 'ready', checks: { database: 'ok' } } },
} satisfies Record<string, StubRoute>
