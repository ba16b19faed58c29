import { render, screen, within } from '@testing-library/react'
import { describe, expect, it } from 'vitest'

import { App } from '@/app'
import { healthy, stubApi } from '@/testing/stub-api'

describe('App', () => {
  it('shows the product and its server’s health', async () => {
    stubApi(healthy)
    render(<App />)

    expect(screen.getByRole('heading', { name: 'Corpus' })).toBeInTheDocument()
    expect(
      screen.getByText('The knowledge base your coding agents and your team share.'),
    ).toBeInTheDocument()
    const list = screen.getByRole('list', { name: 'Server health' })
    expect(await within(list).findByText('up')).toBeInTheDocument()
    expect(await within(list).findByText('ready')).toBeInTheDocument()
  })
})
