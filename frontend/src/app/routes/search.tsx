import { SearchResults } from '@/features/search/components/search-results'
import { usePageTitle } from '@/lib/page-title'

export function SearchRoute() {
  usePageTitle('Search')
  return <SearchResults />
}
