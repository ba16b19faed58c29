import { useMutation, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { getMeQueryOptions } from './get-me'
import { getSignInOptionsQueryOptions } from './get-sign-in-options'

export type LoginInput = components['schemas']['LoginRequest']
export type SignupInput = components['schemas']['SignupRequest']
export type PasswordChangeInput = components['schemas']['PasswordChange']

const SESSION_KEYS = [getMeQueryOptions().queryKey[0], getSignInOptionsQueryOptions().queryKey[0]]

/** Sign in, sign up, sign out and change the password: each changes who "me" is, so each
 *  drops every cached answer (they were someone else's, or nobody's). "Me" is reset rather
 *  than invalidated: a screen mounted next must wait for the new answer, not act on the old
 *  one (a stale 401 would send a person who just signed in back to the sign-in screen). */
function useSessionChange<T>(call: (input: T) => Promise<unknown>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: call,
    onSuccess: async () => {
      queryClient.removeQueries({ predicate: (q) => !SESSION_KEYS.includes(String(q.queryKey[0])) })
      await queryClient.resetQueries({ queryKey: getMeQueryOptions().queryKey })
      await queryClient.resetQueries({ queryKey: getSignInOptionsQueryOptions().queryKey })
    },
  })
}

export const useLogIn = () =>
  useSessionChange((body: LoginInput) => unwrap(api.POST('/api/auth/login', { body })))

export const useSignUp = () =>
  useSessionChange((body: SignupInput) => unwrap(api.POST('/api/auth/signup', { body })))

export const useLogOut = () => useSessionChange(() => unwrap(api.POST('/api/auth/logout')))

export const useChangePassword = () =>
  useSessionChange((body: PasswordChangeInput) =>
    unwrap(api.POST('/api/me/password', { body })),
  )
