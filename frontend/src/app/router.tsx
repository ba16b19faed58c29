import { createBrowserRouter, createMemoryRouter, type RouteObject } from 'react-router'

import { AccountRoute } from '@/app/routes/account'
import { ConsentRoute } from '@/app/routes/consent'
import { DocumentsRoute } from '@/app/routes/documents'
import { HomeRoute } from '@/app/routes/home'
import { LoginRoute, SetupRoute } from '@/app/routes/sign-in'
import { NotFoundRoute } from '@/app/routes/not-found'
import { SearchRoute } from '@/app/routes/search'
import { Shell } from '@/app/shell'

/** API.md's "Web app routes" (part 1: the rest arrive with their screens). */
export const routes: RouteObject[] = [
  { path: '/setup', element: <SetupRoute /> },
  { path: '/login', element: <LoginRoute /> },
  { path: '/oauth/consent', element: <ConsentRoute /> },
  {
    element: <Shell />,
    children: [
      { index: true, element: <HomeRoute /> },
      { path: 'search', element: <SearchRoute /> },
      { path: 'documents', element: <DocumentsRoute /> },
      {
        path: 'documents/:id',
        // The viewer brings the Markdown pipeline and code highlighting: loaded when first opened.
        lazy: async () => ({ Component: (await import('@/app/routes/document')).DocumentRoute }),
      },
      { path: 'account', element: <AccountRoute /> },
      // The admins' screens (issue #31), loaded when first opened.
      { path: 'people', lazy: async () => ({ Component: (await import('@/app/routes/people')).PeopleRoute }) },
      { path: 'connect', lazy: async () => ({ Component: (await import('@/app/routes/connect')).ConnectRoute }) },
      { path: 'workspaces', lazy: async () => ({ Component: (await import('@/app/routes/workspaces')).WorkspacesRoute }) },
      { path: 'audit', lazy: async () => ({ Component: (await import('@/app/routes/audit')).AuditRoute }) },
      { path: '*', element: <NotFoundRoute /> },
    ],
  },
]

export function createAppRouter(initialEntries?: string[]) {
  return initialEntries ? createMemoryRouter(routes, { initialEntries }) : createBrowserRouter(routes)
}
