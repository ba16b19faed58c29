import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'

export const getSignInOptionsQueryOptions = () =>
  queryOptions({
    queryKey: ['sign-in-options'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/auth/options', { signal })),
    staleTime: 0,
  })

export const useSignInOptions = () => useQuery(getSignInOptionsQueryOptions())
