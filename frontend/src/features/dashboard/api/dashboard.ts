import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { dashboardKeys } from './keys'

export type Dashboard = components['schemas']['Dashboard']
export type ActivityItem = components['schemas']['ActivityItem']
export type Gap = components['schemas']['Gap']

export const getDashboardQueryOptions = () =>
  queryOptions({
    queryKey: dashboardKeys.summary,
    queryFn: ({ signal }) => unwrap(api.GET('/api/dashboard', { signal })),
    staleTime: 15_000,
  })

export const useDashboard = () => useQuery(getDashboardQueryOptions())

export const getActivityQueryOptions = () =>
  queryOptions({
    queryKey: dashboardKeys.activity,
    queryFn: ({ signal }) => unwrap(api.GET('/api/dashboard/activity', { params: { query: { limit: 30 } }, signal })),
    staleTime: 15_000,
  })

export const useActivity = () => useQuery(getActivityQueryOptions())

export const getGapsQueryOptions = () =>
  queryOptions({
    queryKey: dashboardKeys.gaps,
    queryFn: ({ signal }) => unwrap(api.GET('/api/gaps', { signal })),
    staleTime: 15_000,
  })

export const useGaps = ({ enabled }: { enabled: boolean }) => useQuery({ ...getGapsQueryOptions(), enabled })

export function useDismissGap() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (question: string) => unwrap(api.POST('/api/gaps/dismiss', { body: { question } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: dashboardKeys.gaps })
    },
  })
}
