import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

export type Person = components['schemas']['User']
export type PersonCreate = components['schemas']['UserCreate']
export type PersonUpdate = components['schemas']['UserUpdate']
export type ApiKey = components['schemas']['ApiKey']
export type ApiKeyCreate = components['schemas']['ApiKeyCreate']
export type ApiKeyCreated = components['schemas']['ApiKeyCreated']

export const peopleKeys = {
  all: ['people'] as const,
  list: ['people', 'list'] as const,
  keys: ['people', 'keys'] as const,
}

// The team of a small organisation fits in one page; the table filters it where it is.
const PEOPLE_LIMIT = 200

export const usePeople = () =>
  useQuery({
    queryKey: peopleKeys.list,
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/people', { params: { query: { limit: PEOPLE_LIMIT } }, signal })),
    placeholderData: keepPreviousData,
  })

export const useKeys = () =>
  useQuery({
    queryKey: peopleKeys.keys,
    queryFn: ({ signal }) => unwrap(api.GET('/api/keys', { signal })),
  })

function useInvalidatePeople() {
  const queryClient = useQueryClient()
  // A change to a person shows in the audit log too.
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: peopleKeys.all }),
      queryClient.invalidateQueries({ queryKey: ['audit'] }),
    ])
}

export const useInvitePerson = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: (body: PersonCreate) => unwrap(api.POST('/api/people', { body })),
    onSuccess: invalidate,
  })
}

export const useUpdatePerson = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: PersonUpdate }) =>
      unwrap(api.PATCH('/api/people/{user_id}', { params: { path: { user_id: id } }, body })),
    onSuccess: invalidate,
  })
}

export const useResetPassword = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/people/{user_id}/reset-password', { params: { path: { user_id: id } } })),
    onSuccess: invalidate,
  })
}

export const useUnlockPerson = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/people/{user_id}/unlock', { params: { path: { user_id: id } } })),
    onSuccess: invalidate,
  })
}

export const useMintKey = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: (body: ApiKeyCreate) => unwrap(api.POST('/api/keys', { body })),
    onSuccess: invalidate,
  })
}

export const useRevokeKey = () => {
  const invalidate = useInvalidatePeople()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/keys/{key_id}', { params: { path: { key_id: id } } })),
    onSuccess: invalidate,
  })
}
