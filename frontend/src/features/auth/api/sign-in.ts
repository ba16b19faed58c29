import { useMutation, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { authKeys } from './keys'

export type LoginInput = components['schemas']['LoginRequest']
export type SignupInput = components['schemas']['SignupRequest']
export type PasswordChangeInput = components['schemas']['PasswordChange']

const SESSION_KEYS: string[] = [authKeys.me[0], authKeys.signInOptions[0]]

/** Sign in, sign up and sign out: each changes who "me" is, so each
 *  drops every cached answer (they were someone else's, or nobody's). "Me" is reset rather
 *  than invalidated: a screen mounted next must wait for the new answer, not act on the old
 *  one. The sign-in options are only marked stale: refetching them now would swap the form
 *  that is finishing for a spinner, and its own callbacks would never run. */
function useSessionChange<T>(call: (input: T) => Promise<unknown>, first?: () => void) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: call,
    onSuccess: async () => {
      first?.()
      queryClient.removeQueries({ predicate: (q) => !SESSION_KEYS.includes(String(q.queryKey[0])) })
      await queryClient.invalidateQueries({
        queryKey: authKeys.signInOptions,
        refetchType: 'none',
      })
      await queryClient.resetQueries({ queryKey: authKeys.me })
    },
  })
}

export const useLogIn = () =>
  useSessionChange((body: LoginInput) => unwrap(api.POST('/api/auth/login', { body })))

export const useSignUp = () =>
  useSessionChange((body: SignupInput) => unwrap(api.POST('/api/auth/signup', { body })))

/** `onSignedOut` runs before "me" is asked again: leaving the signed-in screens first means
 *  none of them sees the 401 and sends the person to sign in "and come back here". */
export const useLogOut = (onSignedOut: () => void) =>
  useSessionChange(() => unwrap(api.POST('/api/auth/logout')), onSignedOut)

/** The same person stays signed in (with a new session): only "me" is asked again, which
 *  clears a forced change and keeps the screen where it is. */
export const useChangePassword = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (body: PasswordChangeInput) => unwrap(api.POST('/api/me/password', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: authKeys.me }),
  })
}
