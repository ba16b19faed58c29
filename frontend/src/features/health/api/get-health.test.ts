import { describe, expect, it } from 'vitest'

import { getHealth } from '@/features/health/api/get-health'
import { getReadiness } from '@/features/health/api/get-readiness'
import { ApiError } from '@/lib/api-client'
import { healthy, stubApi } from '@/testing/stub-api'

describe('getHealth and getReadiness', () => {
  it('resolve to the server’s bodies when it is up and ready', async () => {
    stubApi(healthy)
    await expect(getHealth()).resolves.toEqual({ status: 'ok' })
    await expect(getReadiness()).resolves.toEqual(healthy['/readyz'].get.body)
  })

  it('reject with the API’s error code and message when not ready', async () => {
    stubApi({
      '/readyz': {
        get: {
          status: 503,
          body: { error: { code: 'unavailable', message: 'not ready: migrations' } },
        },
      },
    })
    const error = await getReadiness().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({
      status: 503,
      code: 'unavailable',
      message: 'not ready: migrations',
    })
  })

  it('reject with the HTTP status when an error body is not the API’s', async () => {
    stubApi({ '/healthz': { get: { status: 502, raw: '<html>Bad Gateway</html>' } } })
    await expect(getHealth()).rejects.toMatchObject({
      status: 502,
      code: 'http_502',
      message: 'HTTP 502',
    })
  })

  it('reject with the abort, not an API error, when the caller aborts', async () => {
    stubApi(healthy)
    const controller = new AbortController()
    controller.abort()
    await expect(getHealth({ signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    })
  })
})
