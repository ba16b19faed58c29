import { describe, expect, it, vi } from 'vitest'

import { getHealth } from '@/features/health/api/get-health'
import { healthy, stubFetch } from '@/test/stub-fetch'

describe('getHealth', () => {
  it('reports up and ready with the readiness checks', async () => {
    stubFetch(healthy)
    await expect(getHealth()).resolves.toEqual({
      server: { up: true },
      database: { ready: true, checks: { database: 'ok' } },
    })
  })

  it('falls back to the HTTP status when an error body is not the API envelope', async () => {
    stubFetch({
      '/healthz': { status: 500, body: 'Internal Server Error' },
      '/readyz': { status: 503, body: { detail: 'nope' } },
    })
    await expect(getHealth()).resolves.toEqual({
      server: { up: false, message: 'HTTP 500' },
      database: { ready: false, message: 'HTTP 503' },
    })
  })

  it('rethrows aborts instead of reporting the server down', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.reject(new DOMException('The operation was aborted.', 'AbortError'))),
    )
    const controller = new AbortController()
    controller.abort()
    await expect(getHealth(controller.signal)).rejects.toMatchObject({ name: 'AbortError' })
  })
})
