import type { SearchInput } from './search'

const all = ['search'] as const

/** Every query key of the search feature, for its queries and its invalidations alike. */
export const searchKeys = {
  all,
  results: (input: SearchInput) => [...all, input] as const,
}
