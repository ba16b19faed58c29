/**
 * The workspaces list, read by two features (documents' filters and upload, search's filter)
 * that may not import each other: one query, one key, so that a change either makes (an
 * upload into a new workspace, a deletion that empties one) refreshes both screens.
 */
import { queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

export type Workspace = components['schemas']['Workspace']

export const workspaceKeys = {
  all: ['workspaces'],
} as const

export const getWorkspacesQueryOptions = () =>
  queryOptions({
    queryKey: workspaceKeys.all,
    queryFn: ({ signal }) => unwrap(api.GET('/api/workspaces', { signal })),
    staleTime: 5 * 60_000,
  })

export const useWorkspaces = () => useQuery(getWorkspacesQueryOptions())
