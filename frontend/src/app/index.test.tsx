import { fireEvent, render, screen, within } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'

import { App } from '@/app'
import { healthy, stubApi } from '@/testing/stub-api'

async function healthRows() {
  const list = await screen.findByRole('list', { name: 'Server health' })
  // Wait until both probes have answered (rows say "checking…" until then).
  await vi.waitFor(() => expect(list).not.toHaveTextContent('checking…'))
  const [server, database] = within(list).getAllByRole('listitem')
  return { server, database }
}

describe('App', () => {
  it('shows the product and a healthy, ready server', async () => {
    const fetchMock = stubApi(healthy)
    render(<App />)

    expect(screen.getByRole('heading', { name: 'Corpus' })).toBeInTheDocument()
    expect(
      screen.getByText('The knowledge base your coding agents and your team share.'),
    ).toBeInTheDocument()

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent(/^Server: up$/)
    expect(database).toHaveTextContent(/^Database: ready$/)
    const urls = fetchMock.mock.calls.map(([request]) => new URL((request as Request).url).pathname)
    expect(urls.sort()).toEqual(['/healthz', '/readyz'])
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
    render(<App />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent(/^Server: up$/)
    expect(database).toHaveTextContent(/^Database: not ready \(not ready: database\)$/)
  })

  it('shows the server as down when the fetch itself fails', async () => {
    stubApi({
      '/healthz': { get: { networkError: true } },
      '/readyz': { get: { networkError: true } },
    })
    render(<App />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent('Server: down (could not reach the server)')
    expect(database).toHaveTextContent('Database: not ready (could not reach the server)')
  })

  it('shows a loading state before the probes answer', () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>(() => {})),
    )
    render(<App />)

    const list = screen.getByRole('list', { name: 'Server health' })
    expect(list).toHaveTextContent('Server: checking…')
    expect(list).toHaveTextContent('Database: checking…')
    expect(screen.getByRole('button', { name: 'Check again' })).toBeDisabled()
  })

  it('asks both probes again on "Check again" and shows the new answers', async () => {
    stubApi({
      '/healthz': { get: { networkError: true } },
      '/readyz': { get: { networkError: true } },
    })
    render(<App />)
    await healthRows()

    const fetchMock = stubApi(healthy)
    fireEvent.click(screen.getByRole('button', { name: 'Check again' }))

    const list = screen.getByRole('list', { name: 'Server health' })
    await vi.waitFor(() => expect(list).toHaveTextContent('Server: up'))
    expect(list).toHaveTextContent('Database: ready')
    expect(fetchMock).toHaveBeenCalledTimes(2)
  })
})
