import { fireEvent, screen } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'

import { renderWithProviders } from '@/testing/render'
import { stubApi } from '@/testing/stub-api'

import { LoginForm } from './login-form'

const REFUSED = {
  status: 401,
  body: { error: { code: 'invalid_credentials', message: 'the email or password is wrong' } },
} as const

function fill(email: string, password: string) {
  fireEvent.change(screen.getByLabelText('Email'), { target: { value: email } })
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: password } })
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }))
}

describe('LoginForm', () => {
  it('checks the fields before sending anything', () => {
    const fetchMock = stubApi({})
    renderWithProviders(<LoginForm onSignedIn={vi.fn()} sso={false} />)
    fill('not-an-email', '')
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'true')
    expect(screen.getByLabelText('Password')).toHaveAttribute('aria-invalid', 'true')
    expect(fetchMock).not.toHaveBeenCalled()
  })

  it('shows one and the same message for every refused sign-in', async () => {
    stubApi({ '/api/auth/login': { post: REFUSED } })
    const { unmount } = renderWithProviders(<LoginForm onSignedIn={vi.fn()} sso={false} />)
    fill('nobody@example.com', 'whatever password')
    const unknown = (await screen.findByRole('alert')).textContent
    unmount()

    stubApi({ '/api/auth/login': { post: REFUSED } })
    renderWithProviders(<LoginForm onSignedIn={vi.fn()} sso={false} />)
    fill('ada@example.com', 'the wrong password')
    expect((await screen.findByRole('alert')).textContent).toBe(unknown)
  })

  it('offers single sign-on when it is configured, and explains its failure codes only', () => {
    stubApi({})
    renderWithProviders(<LoginForm onSignedIn={vi.fn()} sso ssoError="<script>" />)
    expect(screen.getByRole('link', { name: 'Sign in with single sign-on' })).toHaveAttribute(
      'href',
      '/api/auth/oidc/login',
    )
    expect(screen.queryByRole('alert')).not.toBeInTheDocument()
  })

  it.each([
    ['oidc', 'Signing in with your identity provider failed'],
    ['oidc_forbidden', 'may not use Corpus'],
  ])('says why single sign-on sent the browser back (%s)', (code, says) => {
    stubApi({})
    renderWithProviders(<LoginForm onSignedIn={vi.fn()} sso ssoError={code} />)
    expect(screen.getByRole('alert')).toHaveTextContent(says)
  })
})
