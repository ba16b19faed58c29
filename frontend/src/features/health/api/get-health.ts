import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { QueryConfig } from '@/lib/react-query'

import { healthKeys } from './keys'

/** `GET /healthz` (getHealth): the process is up. */
export function getHealth({ signal }: { signal?: AbortSignal } = {}) {
  return unwrap(api.GET('/healthz', { signal }))
}

export function getHealthQueryOptions() {
  return queryOptions({
    queryKey: healthKeys.health,
    queryFn: ({ signal }) => getHealth({ signal }),
  })
}

export function useHealth({
  queryConfig,
}: { queryConfig?: QueryConfig<typeof getHealthQueryOptions> } = {}) {
  return useQuery({ ...getHealthQueryOptions(), ...queryConfig })
}
