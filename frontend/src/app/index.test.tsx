import { screen } from '@testing-library/react'
import { RouterProvider } from 'react-router'
import { describe, expect, it } from 'vitest'

import { createAppRouter } from '@/app/router'
import { renderWithProviders } from '@/testing/render'
import { stubApi } from '@/testing/stub-api'

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
