import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { RouterProvider } from 'react-router'
import { describe, expect, it } from 'vitest'

import { createAppRouter } from '@/app/router'
import type { Me } from '@/features/auth/api/get-me'
import type { Person } from '@/features/people/api/people'
import { renderWithProviders } from '@/testing/render'
import { stubApi, type StubRoutes } from '@/testing/stub-api'

const ADMIN_ACTIONS: Me['actions'] = [
  'search',
  'documents.write',
  'documents.manage',
  'workspaces.manage',
  'people.manage',
  'keys.manage',
  'audit.read',
  'policy.manage',
]

function me(role: Me['role'], actions: Me['actions']): Me {
  return {
    id: 'me',
    email: `${role}@example.com`,
    display_name: role,
    role,
    kind: 'human',
    persona: null,
    tools: [],
    must_change_password: false,
    actions,
  }
}

function person(over: Partial<Person>): Person {
  return {
    id: 'p1',
    email: 'ada@example.com',
    display_name: 'Ada',
    role: 'viewer',
    kind: 'human',
    active: true,
    locked: false,
    dormant: false,
    last_seen_at: null,
    created_at: '2026-12-01T00:00:00Z',
    ...over,
  }
}

const team = [
  person({ id: 'p1', email: 'ada@example.com', display_name: 'Ada', locked: true }),
  person({ id: 'p2', email: 'bob@example.com', display_name: 'Bob', dormant: true, role: 'editor' }),
  person({ id: 'p3', email: 'bot@example.com', display_name: 'Bot', kind: 'agent' }),
]

function renderAt(path: string) {
  const router = createAppRouter([path])
  renderWithProviders(<RouterProvider router={router} />)
  return router
}

const common: StubRoutes = {
  '/api/people': { get: { status: 200, body: { items: team, next_cursor: null } } },
  '/api/keys': { get: { status: 200, body: { items: [] } } },
  '/api/workspaces': { get: { status: 200, body: { items: [], next_cursor: null } } },
}

describe('the admin screens', () => {
  it('are not offered to an editor, and say why when opened', async () => {
    stubApi({ '/api/me': { get: { status: 200, body: me('editor', ['search', 'documents.write']) } } })
    renderAt('/people')
    expect(await screen.findByText('For admins only')).toBeInTheDocument()
    const nav = screen.getByRole('navigation', { name: 'Main' })
    expect(within(nav).queryByRole('link', { name: 'People' })).not.toBeInTheDocument()
    expect(within(nav).queryByRole('link', { name: 'Audit log' })).not.toBeInTheDocument()
  })

  it('filter the team by locked, dormant and agents', async () => {
    stubApi({ ...common, '/api/me': { get: { status: 200, body: me('admin', ADMIN_ACTIONS) } } })
    renderAt('/people')
    const table = await screen.findByRole('table', { name: 'People and agents' })
    expect(within(table).getAllByRole('row')).toHaveLength(4)
    fireEvent.click(screen.getByRole('button', { name: /^Locked/ }))
    expect(within(table).getByText('ada@example.com')).toBeInTheDocument()
    expect(within(table).queryByText('bob@example.com')).not.toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', { name: /^Dormant/ }))
    expect(within(table).getByText('bob@example.com')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', { name: /^Agents/ }))
    expect(within(table).getByText('bot@example.com')).toBeInTheDocument()
    expect(within(table).getAllByRole('row')).toHaveLength(2)
  })

  it('show a new key once, with the clients filled with it', async () => {
    const fetch = stubApi({
      ...common,
      '/api/me': { get: { status: 200, body: me('admin', ADMIN_ACTIONS) } },
      '/api/keys': {
        get: { status: 200, body: { items: [] } },
        post: {
          status: 201,
          body: {
            id: 'k1',
            name: 'laptop',
            prefix: 'ck_abcdefghi',
            user_id: 'p3',
            email: 'bot@example.com',
            workspace: null,
            persona: null,
            created_at: '2026-12-01T00:00:00Z',
            last_used_at: null,
            revoked_at: null,
            key: 'ck_abcdefghijklmnopqrstuvwxyz0123456789',
          },
        },
      },
    })
    renderAt('/people')
    fireEvent.click((await screen.findAllByRole('button', { name: 'Mint a key' })).at(0) as HTMLElement)
    const account = await screen.findByLabelText('Account')
    await waitFor(() => { expect(account).toHaveValue('p3') })
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'laptop' } })
    fireEvent.click(screen.getByRole('button', { name: 'Mint key' }))
    expect(await screen.findByLabelText('The new API key')).toHaveTextContent(
      'ck_abcdefghijklmnopqrstuvwxyz0123456789',
    )
    expect(screen.getByLabelText('Claude Code configuration')).toHaveTextContent(
      'Authorization: Bearer ck_abcdefghijklmnopqrstuvwxyz0123456789',
    )
    const post = fetch.mock.calls
      .map(([request]) => request as Request)
      .find((request) => request.method === 'POST')
    expect(await post?.json()).toEqual({ user_id: 'p3', name: 'laptop', workspace: null, persona: null })
  })

  it('show the audit log with before and after side by side', async () => {
    stubApi({
      '/api/me': { get: { status: 200, body: me('admin', ADMIN_ACTIONS) } },
      '/api/audit': {
        get: {
          status: 200,
          body: {
            items: [
              {
                id: 'a1',
                at: '2026-12-01T00:00:00Z',
                actor_id: 'me',
                actor_email: 'admin@example.com',
                action: 'user.update',
                target_type: 'user',
                target_id: 'p1',
                before: { role: 'viewer' },
                after: { role: 'editor' },
              },
            ],
            next_cursor: null,
          },
        },
      },
    })
    renderAt('/audit')
    const changes = await screen.findByRole('table', { name: 'Changes of user.update' })
    const row = within(changes).getByRole('row', { name: /role/ })
    expect(within(row).getAllByRole('cell').map((cell) => cell.textContent)).toEqual(['viewer', 'editor'])
  })

  it('mark a persona whose workspaces do not exist', async () => {
    stubApi({
      '/api/me': { get: { status: 200, body: me('admin', ADMIN_ACTIONS) } },
      '/api/workspaces': { get: { status: 200, body: { items: [], next_cursor: null } } },
      '/api/policy': {
        get: {
          status: 200,
          body: {
            routing_mode: 'persona-routed',
            default_persona: null,
            personas: { hiroshi: { workspaces: ['framework_nestjs'], source: 'builtin' } },
            licenses: {},
            missing_workspaces: ['framework_nestjs'],
          },
        },
      },
    })
    renderAt('/workspaces')
    const row = await screen.findByTestId('persona-hiroshi')
    expect(await within(row).findByText('None of its workspaces exist: it finds nothing')).toBeInTheDocument()
    expect(within(row).getByText('Built-in')).toBeInTheDocument()
  })
})
