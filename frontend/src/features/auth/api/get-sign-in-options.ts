import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'

import { authKeys } from './keys'

export const getSignInOptionsQueryOptions = () =>
  queryOptions({
    queryKey: authKeys.signInOptions,
    queryFn: ({ signal }) => unwrap(api.GET('/api/auth/options', { signal })),
    staleTime: 0,
  })

export const useSignInOptions = () => useQuery(getSignInOptionsQueryOptions())
