import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { searchKeys } from './keys'

export type SearchHit = components['schemas']['SearchHit']
export type SearchMode = components['schemas']['SearchRequest']['mode']

export type SearchInput = { query: string; mode: SearchMode; workspace?: string; tag?: string }

export const getSearchQueryOptions = (input: SearchInput) =>
  queryOptions({
    queryKey: searchKeys.results(input),
    queryFn: ({ signal }) =>
      unwrap(
        api.POST('/api/search', {
          body: {
            query: input.query,
            mode: input.mode,
            top_k: 20,
            workspaces: input.workspace ? [input.workspace] : null,
            tags: input.tag ? [input.tag] : null,
          },
          signal,
        }),
      ),
    enabled: input.query.trim().length > 0,
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  })

export const useSearch = (input: SearchInput) => useQuery(getSearchQueryOptions(input))
