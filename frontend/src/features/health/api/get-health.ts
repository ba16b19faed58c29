/**
 * Server health, read from the backend's unauthenticated probes:
 *   GET /healthz -> 200 {"status":"ok"}
 *   GET /readyz  -> 200 {"status":"ready","checks":{...}}
 *                   503 {"error":{"code":"unavailable","message":"...","details":{...}}}
 *
 * Plain fetch for now; to be replaced by the generated openapi-fetch client.
 */

export type HealthzResponse = { status: 'ok' }

export type ReadyzResponse = { status: 'ready'; checks: Record<string, unknown> }

/** The backend's error envelope, shared by every non-2xx JSON response. */
export type ApiErrorBody = {
  error: { code: string; message: string; details?: Record<string, unknown> }
}

export type ServerHealth = { up: true } | { up: false; message: string }

export type DatabaseHealth =
  | { ready: true; checks: Record<string, unknown> }
  | { ready: false; message: string }

export type Health = { server: ServerHealth; database: DatabaseHealth }

const UNREACHABLE = 'could not reach the server'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isHealthzResponse(value: unknown): value is HealthzResponse {
  return isRecord(value) && value.status === 'ok'
}

function isReadyzResponse(value: unknown): value is ReadyzResponse {
  return isRecord(value) && value.status === 'ready' && isRecord(value.checks)
}

export function isApiErrorBody(value: unknown): value is ApiErrorBody {
  return (
    isRecord(value) &&
    isRecord(value.error) &&
    typeof value.error.code === 'string' &&
    typeof value.error.message === 'string'
  )
}

function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError'
}

/** GET a JSON endpoint. Network failures resolve to `null`; aborts are rethrown. */
async function fetchJson(
  path: string,
  signal?: AbortSignal,
): Promise<{ status: number; ok: boolean; body: unknown } | null> {
  let response: Response
  try {
    response = await fetch(path, { headers: { Accept: 'application/json' }, signal })
  } catch (error) {
    if (isAbortError(error) || signal?.aborted) throw error
    return null
  }
  let body: unknown = null
  try {
    body = await response.json()
  } catch (error) {
    if (isAbortError(error) || signal?.aborted) throw error
    // Not JSON (e.g. a proxy error page): keep body null, the status speaks.
  }
  return { status: response.status, ok: response.ok, body }
}

function describeFailure(status: number, body: unknown): string {
  return isApiErrorBody(body) ? body.error.message : `HTTP ${status}`
}

export async function getServerHealth(signal?: AbortSignal): Promise<ServerHealth> {
  const result = await fetchJson('/healthz', signal)
  if (result === null) return { up: false, message: UNREACHABLE }
  if (result.ok && isHealthzResponse(result.body)) return { up: true }
  if (result.ok) return { up: false, message: 'unexpected response' }
  return { up: false, message: describeFailure(result.status, result.body) }
}

export async function getDatabaseHealth(signal?: AbortSignal): Promise<DatabaseHealth> {
  const result = await fetchJson('/readyz', signal)
  if (result === null) return { ready: false, message: UNREACHABLE }
  if (result.ok && isReadyzResponse(result.body)) {
    return { ready: true, checks: result.body.checks }
  }
  if (result.ok) return { ready: false, message: 'unexpected response' }
  return { ready: false, message: describeFailure(result.status, result.body) }
}

/** Both probes, in parallel. Never rejects except when `signal` aborts. */
export async function getHealth(signal?: AbortSignal): Promise<Health> {
  const [server, database] = await Promise.all([
    getServerHealth(signal),
    getDatabaseHealth(signal),
  ])
  return { server, database }
}
