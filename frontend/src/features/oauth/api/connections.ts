import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { oauthKeys } from './keys'

export type Connection = components['schemas']['Connection']

export const getConnectionsQueryOptions = () =>
  queryOptions({
    queryKey: oauthKeys.connections,
    queryFn: ({ signal }) => unwrap(api.GET('/api/me/connections', { signal })),
  })

export const useConnections = () => useQuery(getConnectionsQueryOptions())

export const useDisconnect = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (clientId: string) =>
      unwrap(
        api.DELETE('/api/me/connections/{client_id}', {
          params: { path: { client_id: clientId } },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: oauthKeys.connections }),
  })
}
