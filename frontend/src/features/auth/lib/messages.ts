import { ApiError } from '@/lib/api-client'

/** What to tell a person whose sign-in failed. Every refused sign-in reads the same, as the
 *  server's answer does, so the screen tells no more than the server about which emails exist. */
export function signInFailure(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'invalid_credentials') {
      return 'That email and password did not work. Check them and try again.'
    }
    if (error.code === 'rate_limited') return 'Too many attempts. Wait a minute, then try again.'
    return error.message
  }
  return 'Could not reach the server. Check your connection and try again.'
}

/** Why a password change was refused. */
export function passwordFailure(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'invalid_credentials') return 'Your current password is not right.'
    if (error.code === 'rate_limited') return 'Too many attempts. Wait a minute, then try again.'
    return error.message
  }
  return 'Could not reach the server. Check your connection and try again.'
}

/** The reason an OpenID Connect sign-in came back to the sign-in screen (app/routers/oidc.py
 *  sends the code); the query string itself is never shown. */
export const SSO_ERRORS: Record<string, string> = {
  oidc: 'Signing in with your identity provider failed. Try again, or use your password.',
  oidc_forbidden:
    'Your identity provider signed you in, but that account may not use Corpus. Ask an admin to invite you.',
}

export const MIN_PASSWORD = 10

/** The server's password rules (app/people/passwords.py), checked before sending. */
export function passwordProblem(password: string, email = ''): string | undefined {
  if (password.length < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters.`
  if (password.length > 1000) return 'Use at most 1000 characters.'
  if (new Set(password).size === 1) return 'A single repeated character is not a password.'
  const lowered = password.trim().toLowerCase()
  const mail = email.toLowerCase()
  if (mail && (lowered === mail || lowered === mail.split('@')[0])) {
    return 'Do not use your email address.'
  }
  return undefined
}

export function emailProblem(email: string): string | undefined {
  if (!email.trim()) return 'Enter your email address.'
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) return 'Enter an email like name@example.com.'
  return undefined
}
