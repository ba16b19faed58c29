import { fireEvent, screen, within } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'

import { HealthStatus } from '@/features/health/components/health-status'
import { renderWithProviders } from '@/testing/render'
import { healthy, stubApi, type StubRoutes } from '@/testing/stub-api'

const unreachable = {
  '/healthz': { get: { networkError: true } },
  '/readyz': { get: { networkError: true } },
} satisfies StubRoutes

async function healthRows() {
  const list = await screen.findByRole('list', { name: 'Server health' })
  // Wait until both probes have answered (rows say "checking…" until then).
  await vi.waitFor(() => {
    expect(list).not.toHaveTextContent('checking…')
  })
  const [server, database] = within(list).getAllByRole('listitem')
  return { server, database }
}

describe('HealthStatus', () => {
  it('shows an up, ready server', async () => {
    const fetchMock = stubApi(healthy)
    renderWithProviders(<HealthStatus />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent(/^Server: up$/)
    expect(database).toHaveTextContent(/^Database: ready$/)
    const paths = fetchMock.mock.calls.map(
      ([request]) => new URL((request as Request).url).pathname,
    )
    expect(paths.sort()).toEqual(['/healthz', '/readyz'])
  })

  it('shows the server’s reason when /readyz answers 503', async () => {
    stubApi({
      ...healthy,
      '/readyz': {
        get: {
          status: 503,
          body: {
            error: {
              code: 'unavailable',
              message: 'not ready: database',
              details: { database: { ok: false, detail: 'unreachable (OSError)' } },
            },
          },
        },
      },
    })
    renderWithProviders(<HealthStatus />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent(/^Server: up$/)
    expect(database).toHaveTextContent(/^Database: not ready \(not ready: database\)$/)
  })

  it('shows the server as down when the fetch itself fails', async () => {
    stubApi(unreachable)
    renderWithProviders(<HealthStatus />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent('Server: down (could not reach the server)')
    expect(database).toHaveTextContent('Database: not ready (could not reach the server)')
  })

  it('shows a loading state before the probes answer', () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>(() => {})),
    )
    renderWithProviders(<HealthStatus />)

    const list = screen.getByRole('list', { name: 'Server health' })
    expect(list).toHaveTextContent('Server: checking…')
    expect(list).toHaveTextContent('Database: checking…')
    expect(screen.getByRole('button', { name: 'Check again' })).toBeDisabled()
  })

  it('asks both probes again on "Check again" and shows the new answers', async () => {
    stubApi(unreachable)
    renderWithProviders(<HealthStatus />)
    await healthRows()

    const fetchMock = stubApi(healthy)
    fireEvent.click(screen.getByRole('button', { name: 'Check again' }))

    const list = screen.getByRole('list', { name: 'Server health' })
    await vi.waitFor(() => {
      expect(list).toHaveTextContent('Server: up')
    })
    expect(list).toHaveTextContent('Database: ready')
    expect(fetchMock).toHaveBeenCalledTimes(2)
  })
})
