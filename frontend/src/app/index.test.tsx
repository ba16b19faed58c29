import { fireEvent, screen } from '@testing-library/react'
import { RouterProvider } from 'react-router'
import { describe, expect, it } from 'vitest'

import { createAppRouter } from '@/app/router'
import { renderWithProviders } from '@/testing/render'
import type { Me } from '@/features/auth/api/get-me'
import { stubApi, type StubRoutes } from '@/testing/stub-api'

const unauthenticated = {
  status: 401,
  body: { error: { code: 'unauthenticated', message: 'sign in first' } },
} as const

function renderAt(path: string) {
  const router = createAppRouter([path])
  renderWithProviders(<RouterProvider router={router} />)
  return router
}

describe('App', () => {
  it('sends the first visitor of a fresh install to create the admin', async () => {
    stubApi({
      '/api/me': { get: unauthenticated },
      '/api/auth/options': { get: { status: 200, body: { first_run: true, signup_open: true, oidc: false } } },
    })
    const router = renderAt('/documents')
    expect(await screen.findByRole('heading', { name: 'Welcome to Corpus' })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/setup')
  })

  it('sends a signed-out person to sign in, and remembers where they were going', async () => {
    stubApi({
      '/api/me': { get: unauthenticated },
      '/api/auth/options': { get: { status: 200, body: { first_run: false, signup_open: false, oidc: false } } },
    })
    const router = renderAt('/documents/abc#chunk-1')
    expect(await screen.findByRole('heading', { name: 'Sign in to Corpus' })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/login')
    expect(router.state.location.search).toBe(`?next=${encodeURIComponent('/documents/abc#chunk-1')}`)
  })

  it('asks for a new password before anything else after an admin reset', async () => {
    stubApi({
      '/api/me': {
        get: {
          status: 200,
          body: {
            id: 'u1',
            email: 'a@example.com',
            display_name: 'Ada',
            role: 'viewer',
            kind: 'human',
            persona: null,
            tools: [],
            must_change_password: true,
            actions: ['search'],
          },
        },
      },
    })
    renderAt('/documents')
    expect(await screen.findByRole('heading', { name: 'Choose a new password' })).toBeInTheDocument()
    expect(screen.getByLabelText('Temporary password')).toBeInTheDocument()
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument()
  })
})

describe('signing in', () => {
  it('signing out and in again lands back in the app', async () => {
    const me = {
      id: 'u1',
      email: 'ada@example.com',
      display_name: 'Ada',
      role: 'admin',
      kind: 'human',
      persona: null,
      tools: [] as Me['tools'],
      must_change_password: false,
      actions: ['search', 'documents.write', 'documents.manage'] as Me['actions'],
    } as const
    const user = {
      id: 'u1',
      email: 'ada@example.com',
      display_name: 'Ada',
      role: 'admin',
      kind: 'human',
      active: true,
      locked: false,
      dormant: false,
      last_seen_at: null,
      created_at: '2026-12-01T00:00:00Z',
    } as const
    const options = { status: 200, body: { first_run: false, signup_open: false, oidc: false } } as const
    const signedIn: StubRoutes = {
      '/api/me': { get: { status: 200, body: me } },
      '/api/auth/options': { get: options },
      '/api/me/connections': { get: { status: 200, body: { items: [] } } },
      '/api/documents': { get: { status: 200, body: { items: [], next_cursor: null } } },
      '/api/auth/login': { post: { status: 200, body: user } },
    }
    stubApi(signedIn)
    const router = renderAt('/account')
    await screen.findByRole('heading', { name: 'Account' })

    stubApi({
      '/api/me': { get: unauthenticated },
      '/api/auth/options': { get: options },
      '/api/auth/logout': { post: { status: 204, raw: '' } },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }))
    await screen.findByRole('heading', { name: 'Sign in to Corpus' })

    stubApi(signedIn)
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'ada@example.com' } })
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'long enough password' } })
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }))
    expect(await screen.findByRole('navigation', { name: 'Main' })).toBeInTheDocument()
    expect(router.state.location.pathname).not.toBe('/login')
    expect(screen.queryByRole('heading', { name: 'Sign in to Corpus' })).not.toBeInTheDocument()
  })
})
