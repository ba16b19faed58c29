import { fireEvent, screen, waitFor } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'

import { renderWithProviders } from '@/testing/render'
import { stubApi } from '@/testing/stub-api'

import type { ConsentRequest } from '../api/consent'
import { ConsentScreen } from './consent-screen'

const REQUEST: ConsentRequest = {
  client_id: 'c1',
  client_name: 'Corpus Official',
  client_name_self_declared: true,
  redirect_host: 'evil.example',
  redirect_uri: 'https://evil.example/cb',
  scopes: [],
  resource: 'https://kb.example.com/mcp',
  role: 'editor',
  tools: ['search_docs', 'upload_document'],
}

describe('ConsentScreen', () => {
  it('leads with the redirect host and marks the name as the client’s own claim', async () => {
    stubApi({ '/api/oauth/consent/{tx}': { get: { status: 200, body: REQUEST } } })
    renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={vi.fn()} go={vi.fn()} />)
    const heading = await screen.findByRole('heading', { level: 1 })
    expect(heading).toHaveTextContent('Connect evil.example to Corpus?')
    expect(heading).not.toHaveTextContent('Corpus Official')
    expect(screen.getByTestId('self-declared')).toBeInTheDocument()
    expect(screen.getByText('upload_document')).toBeInTheDocument()
    expect(screen.getByText('https://evil.example/cb')).toBeInTheDocument()
  })

  it('names the domain a metadata document client was checked at, and only for one', async () => {
    const cimd = { ...REQUEST, client_id: 'https://agent.example/client.json', verified_domain: 'agent.example' }
    stubApi({ '/api/oauth/consent/{tx}': { get: { status: 200, body: cimd } } })
    const { unmount } = renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={vi.fn()} go={vi.fn()} />)
    expect(await screen.findByTestId('verified-domain')).toHaveTextContent('agent.example')
    unmount()
    stubApi({ '/api/oauth/consent/{tx}': { get: { status: 200, body: REQUEST } } })
    renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={vi.fn()} go={vi.fn()} />)
    await screen.findByRole('heading', { level: 1 })
    expect(screen.queryByTestId('verified-domain')).not.toBeInTheDocument()
  })

  it('sends the browser where the server says after an answer, once', async () => {
    const fetchMock = stubApi({
      '/api/oauth/consent/{tx}': {
        get: { status: 200, body: REQUEST },
        post: { status: 200, body: { redirect_to: 'https://evil.example/cb?error=access_denied' } },
      },
    })
    const go = vi.fn()
    renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={vi.fn()} go={go} />)
    fireEvent.click(await screen.findByRole('button', { name: 'Deny' }))
    await waitFor(() => { expect(go).toHaveBeenCalledWith('https://evil.example/cb?error=access_denied') })
    const posted = fetchMock.mock.calls.map(([request]) => request as Request).filter((r) => r.method === 'POST')
    expect(posted).toHaveLength(1)
    expect(await posted[0]?.json()).toEqual({ approve: false })
    expect(screen.getByRole('button', { name: 'Approve' })).toBeDisabled()
  })

  it('sends a signed-out person to sign in, and says when a request is gone', async () => {
    stubApi({
      '/api/oauth/consent/{tx}': {
        get: { status: 401, body: { error: { code: 'unauthenticated', message: 'sign in' } } },
      },
    })
    const signIn = vi.fn()
    const { unmount } = renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={signIn} go={vi.fn()} />)
    await waitFor(() => { expect(signIn).toHaveBeenCalled() })
    unmount()

    stubApi({
      '/api/oauth/consent/{tx}': {
        get: { status: 404, body: { error: { code: 'not_found', message: 'unknown' } } },
      },
    })
    renderWithProviders(<ConsentScreen tx="tx-12345678" onUnauthenticated={vi.fn()} go={vi.fn()} />)
    expect(await screen.findByText('This request has expired or was already answered.')).toBeInTheDocument()
  })
})
