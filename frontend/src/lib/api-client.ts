/**
 * The typed client of Corpus's HTTP API. `./api/schema.d.ts` is generated from
 * `frontend/openapi.json`, which is the document the server serves (`make openapi` rewrites
 * both; a Python test fails while they are stale), so a path, a parameter or a body the server
 * does not have is a type error here.
 *
 * Features call `api.GET('/path', …)` inside `unwrap(…)`: the data of a 2xx answer, or an
 * `ApiError` thrown for TanStack Query to hold in `query.error`.
 */
import createClient from 'openapi-fetch'

import type { components, paths } from '@/lib/api/schema'

export type ErrorBody = components['schemas']['ErrorBody']

export const api = createClient<paths>({
  // Same origin: the server serves the app, and `npm run dev` proxies the API to it.
  baseUrl: '',
  headers: { Accept: 'application/json' },
  // Looked up on each call rather than captured now, so tests can stub `globalThis.fetch`.
  fetch: (request) => globalThis.fetch(request),
})

/** A non-2xx answer. `code` is API.md's error code, or `http_<status>` when the body is not the
 *  API's error body (a proxy's error page, say). */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly status: number
  readonly code: string
  readonly details: unknown

  constructor(status: number, body: unknown) {
    const error = isErrorBody(body) ? body.error : undefined
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.code = error?.code ?? `http_${status}`
    this.details = error?.details
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false
  const { error } = value
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  )
}

type Answer<T> = { data?: T; error?: unknown; response: Response }

/** The data of a 2xx answer; anything else throws `ApiError`. A failed fetch (the server is
 *  unreachable) and an abort reject as they are. */
export async function unwrap<T>(answer: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await answer
  if (!response.ok) throw new ApiError(response.status, error)
  return data as T
}

/** What to tell a person about a failed request. */
export function errorMessage(error: unknown): string {
  return error instanceof ApiError ? error.message : 'could not reach the server'
}
