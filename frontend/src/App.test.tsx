import { render, screen, within } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'

import { App } from '@/App'
import { healthy, stubFetch } from '@/test/stub-fetch'

async function healthRows() {
  const list = await screen.findByRole('list', { name: 'Server health' })
  // Wait until the probes have answered (the loading rows say "checking…").
  await within(list).findAllByText(/^(up|down)$/)
  const [server, database] = within(list).getAllByRole('listitem')
  return { server, database }
}

describe('App', () => {
  it('shows the product and a healthy, ready server', async () => {
    const fetchMock = stubFetch(healthy)
    render(<App />)

    expect(screen.getByRole('heading', { name: 'Corpus' })).toBeInTheDocument()
    expect(
      screen.getByText('The knowledge base your coding agents and your team share.'),
    ).toBeInTheDocument()

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent('Server: up')
    expect(database).toHaveTextContent(/^Database: ready$/)
    expect(fetchMock).toHaveBeenCalledWith('/healthz', expect.anything())
    expect(fetchMock).toHaveBeenCalledWith('/readyz', expect.anything())
  })

  it('shows the not-ready message when /readyz answers 503', async () => {
    stubFetch({
      '/healthz': healthy['/healthz'],
      '/readyz': {
        status: 503,
        body: {
          error: {
            code: 'unavailable',
            message: 'database is not reachable',
            details: { database: 'connection refused' },
          },
        },
      },
    })
    render(<App />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent('Server: up')
    expect(database).toHaveTextContent('Database: not ready (database is not reachable)')
  })

  it('shows the server as down when the fetch itself fails', async () => {
    stubFetch({ '/healthz': { networkError: true }, '/readyz': { networkError: true } })
    render(<App />)

    const { server, database } = await healthRows()
    expect(server).toHaveTextContent('Server: down (could not reach the server)')
    expect(database).toHaveTextContent('Database: not ready (could not reach the server)')
  })

  it('shows a loading state before the probes answer', () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})))
    render(<App />)

    const list = screen.getByRole('list', { name: 'Server health' })
    expect(list).toHaveTextContent('Server: checking…')
    expect(list).toHaveTextContent('Database: checking…')
    expect(screen.getByRole('button', { name: 'Check again' })).toBeDisabled()
  })
})
