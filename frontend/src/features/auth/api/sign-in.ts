import { useMutation, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { getMeQueryOptions } from './get-me'
import { getSignInOptionsQueryOptions } from './get-sign-in-options'

export type LoginInput = components['schemas']['LoginRequest']
export type SignupInput = components['schemas']['SignupRequest']
export type PasswordChangeInput = components['schemas']['PasswordChange']

/** Sign in, sign up, sign out and change the password: each changes who "me" is, so each
 *  drops every cached answer (they were someone else's, or nobody's). */
function useSessionChange<T>(call: (input: T) => Promise<unknown>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: call,
    onSuccess: async () => {
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'me' })
      await queryClient.invalidateQueries({ queryKey: getMeQueryOptions().queryKey })
      await queryClient.invalidateQueries({ queryKey: getSignInOptionsQueryOptions().queryKey })
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
