import { AppProvider } from '@/app/provider'
import { Home } from '@/app/home'

/** The app shell. One screen so far; a router goes here (`src/app/router.tsx`, screens under
 *  `src/app/routes/`) when the second screen arrives. */
export function App() {
  return (
    <AppProvider>
      <Home />
    </AppProvider>
  )
}
