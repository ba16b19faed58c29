import { createBrowserRouter, createMemoryRouter, type RouteObject } from 'react-router'

import { AccountRoute } from '@/app/routes/account'
import { ConsentRoute } from '@/app/routes/consent'
import { DocumentsRoute } from '@/app/routes/documents'
import { HomeRoute } from '@/app/routes/home'
import { LoginRoute, SetupRoute } from '@/app/routes/sign-in'
import { NotFoundRoute } from '@/app/routes/not-found'
import { SearchRoute } from '@/app/routes/search'
import { Shell } from '@/app/shell'

/** API.md's "Web app routes" (the admin screens arrive with their own issue). */
export const routes: RouteObject[] = [
  { path: '/setup', element: <SetupRoute /> },
  { path: '/login', element: <LoginRoute /> },
  { path: '/oauth/consent', element: <ConsentRoute /> },
  {
    element: <Shell />,
    children: [
      { index: true, element: <HomeRoute /> },
      {
        path: 'chat/:id?',
        // Answers are Markdown: the pipeline loads with the chat.
        lazy: async () => ({ Component: (await import('@/app/routes/chat')).ChatRoute }),
      },
      { path: 'search', element: <SearchRoute /> },
      {
        path: 'dashboard',
        // The charts bring their library: loaded when first opened.
        lazy: async () => ({ Component: (await import('@/app/routes/dashboard')).DashboardRoute }),
      },
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
