import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState, type ReactNode } from 'react'
import { Toaster } from 'sonner'

import { TooltipProvider } from '@/components/ui/tooltip'
import { queryConfig } from '@/lib/react-query'
import { useTheme } from '@/lib/theme'

function ThemedToaster() {
  const [theme] = useTheme()
  return <Toaster theme={theme} position="bottom-right" closeButton />
}

/** Everything a screen needs around it. One query cache per mounted app (and so per test). */
export function AppProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: queryConfig }))
  return (
    <QueryClientProvider client={queryClient}>
      <TooltipProvider delayDuration={200}>
        {children}
        <ThemedToaster />
      </TooltipProvider>
    </QueryClientProvider>
  )
}
