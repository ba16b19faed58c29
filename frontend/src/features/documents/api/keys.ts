import type { DocumentFilters } from './documents'

const all = ['documents'] as const
const lists = [...all, 'list'] as const

/** Every query key of the documents feature, for its queries and its invalidations alike:
 *  `all` covers every one, `lists` every page of every filter, `detail(id)` one document and
 *  what hangs off it (chunks, related, backlinks, links). */
export const documentKeys = {
  all,
  lists,
  list: (filters: DocumentFilters) => [...lists, filters] as const,
  detail: (id: string) => [...all, 'one', id] as const,
  chunks: (id: string) => [...documentKeys.detail(id), 'chunks'] as const,
  related: (id: string) => [...documentKeys.detail(id), 'related'] as const,
  backlinks: (id: string) => [...documentKeys.detail(id), 'backlinks'] as const,
  links: (id: string) => [...documentKeys.detail(id), 'links'] as const,
}
