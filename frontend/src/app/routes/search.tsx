import { SearchResults } from '@/features/search/components/search-results'

export function SearchRoute() {
  return <SearchResults />
}
