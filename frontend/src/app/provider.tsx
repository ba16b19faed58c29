import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState, type ReactNode } from 'react'

import { queryConfig } from '@/lib/react-query'

/** Everything a screen needs around it. One query cache per mounted app (and so per test). */
export function AppProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: queryConfig }))
  return <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
}
