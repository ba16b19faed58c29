import { keepPreviousData, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

export type AuditEntry = components['schemas']['AuditEntry']

export type AuditFilters = {
  actor?: string
  action?: string
  target?: string
  since?: string
  until?: string
  cursor?: string
}

const PAGE_SIZE = 50

export const useAudit = (filters: AuditFilters) =>
  useQuery({
    queryKey: ['audit', filters],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/audit', { params: { query: { ...filters, limit: PAGE_SIZE } }, signal })),
    placeholderData: keepPreviousData,
  })
