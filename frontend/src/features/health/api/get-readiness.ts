import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { QueryConfig } from '@/lib/react-query'

import { healthKeys } from './keys'

/** `GET /readyz` (getReadiness): the database is reachable and migrated. Not ready is a 503,
 *  so it arrives as an `ApiError` whose message names the failing checks. */
export function getReadiness({ signal }: { signal?: AbortSignal } = {}) {
  return unwrap(api.GET('/readyz', { signal }))
}

export function getReadinessQueryOptions() {
  return queryOptions({
    queryKey: healthKeys.readiness,
    queryFn: ({ signal }) => getReadiness({ signal }),
  })
}

export function useReadiness({
  queryConfig,
}: { queryConfig?: QueryConfig<typeof getReadinessQueryOptions> } = {}) {
  return useQuery({ ...getReadinessQueryOptions(), ...queryConfig })
}
