import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { describe, expect, it } from 'vitest'

import { renderWithProviders } from '@/testing/render'
import { stubApi } from '@/testing/stub-api'

import type { ListedDocument } from '../api/documents'
import { DocumentsBrowser } from './documents-browser'

function listed(id: string, title: string, stale: boolean): ListedDocument {
  return {
    id,
    title,
    workspace: 'docs',
    owner_id: null,
    visibility: 'org',
    tags: [],
    source: `git:${title}.md`,
    media_type: 'text/markdown',
    chunk_count: 1,
    version: 1,
    created_at: '2026-12-01T00:00:00Z',
    updated_at: '2026-12-01T00:00:00Z',
    source_path: `${title}.md`,
    commit: 'abc123',
    commit_date: '2026-12-01T00:00:00Z',
    stale,
  }
}

function renderBrowser(entry: string) {
  const fetchMock = stubApi({
    '/api/workspaces': { get: { status: 200, body: { items: [], next_cursor: null } } },
    '/api/documents': {
      get: {
        status: 200,
        body: { items: [listed('d1', 'config', true), listed('d2', 'other', false)], next_cursor: null },
      },
    },
  })
  const router = createMemoryRouter(
    [{ path: '/documents', element: <DocumentsBrowser meId="me" canUpload={false} canEdit={() => false} /> }],
    { initialEntries: [entry] },
  )
  renderWithProviders(<RouterProvider router={router} />)
  // The `stale` query each documents request carried, in order.
  const staleAsked = () =>
    fetchMock.mock.calls
      .map(([input]) => new URL(input instanceof Request ? input.url : String(input)))
      .filter((url) => url.pathname === '/api/documents')
      .map((url) => url.searchParams.get('stale'))
  return { router, staleAsked }
}

describe('DocumentsBrowser', () => {
  it('badges the rows that may be stale, and keeps the freshness filter in the URL', async () => {
    const { router, staleAsked } = renderBrowser('/documents')
    const row = (await screen.findByRole('link', { name: /config/ })).closest('tr')
    expect(row).not.toBeNull()
    expect(within(row as HTMLElement).getByText('May be stale')).toBeInTheDocument()
    const other = screen.getByRole('link', { name: /other/ }).closest('tr') as HTMLElement
    expect(within(other).queryByText('May be stale')).toBeNull()
    expect(staleAsked()).toEqual([null])

    fireEvent.change(screen.getByLabelText('Freshness'), { target: { value: 'true' } })
    await waitFor(() => { expect(staleAsked().at(-1)).toBe('true') })
    expect(router.state.location.search).toBe('?stale=true')

    fireEvent.change(screen.getByLabelText('Freshness'), { target: { value: '' } })
    await waitFor(() => { expect(router.state.location.search).toBe('') })
  })

  it('reads the freshness filter from the URL it opens at', async () => {
    const { staleAsked } = renderBrowser('/documents?stale=false')
    await screen.findByRole('link', { name: /config/ })
    expect(screen.getByLabelText('Freshness')).toHaveValue('false')
    expect(staleAsked()).toEqual(['false'])
  })
})
