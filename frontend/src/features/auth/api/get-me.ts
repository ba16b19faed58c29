import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { authKeys } from './keys'

export type Me = components['schemas']['Me']

export const getMeQueryOptions = () =>
  queryOptions({
    queryKey: authKeys.me,
    queryFn: ({ signal }) => unwrap(api.GET('/api/me', { signal })),
    staleTime: 5 * 60_000,
  })

export const useMe = () => useQuery(getMeQueryOptions())
