import { RouterProvider } from 'react-router'
import { useState } from 'react'

import { AppProvider } from '@/app/provider'
import { createAppRouter } from '@/app/router'

/** The app: providers around the router (screens under `src/app/routes/`). */
export function App() {
  const [router] = useState(() => createAppRouter())
  return (
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>
  )
}
