import { describe, expect, it } from 'vitest'

import { CLIENTS, mcpUrl, REGISTRATIONS, snippet } from './snippets'

describe('MCP client snippets', () => {
  it('carry the key in every client that takes a header', () => {
    const url = mcpUrl('https://kb.example.com/')
    expect(url).toBe('https://kb.example.com/mcp')
    for (const { id } of CLIENTS.filter((client) => client.id !== 'oauth')) {
      const text = snippet(id, url, 'ck_secret')
      expect(text).toContain(url)
      expect(text).toContain('Bearer ck_secret')
    }
    expect(JSON.parse(snippet('cursor', url, 'ck_secret'))).toEqual({
      mcpServers: { corpus: { url, headers: { Authorization: 'Bearer ck_secret' } } },
    })
  })

  it('fall back to OAuth without a key', () => {
    const url = 'https://kb.example.com/mcp'
    for (const { id } of CLIENTS) expect(snippet(id, url)).not.toContain('Bearer')
    expect(snippet('oauth', url)).toBe(url)
  })

  it('name how each client connects: a key where it takes a header, and one OAuth way at least', () => {
    for (const { id, registrations } of CLIENTS) {
      expect(registrations.includes('api-key')).toBe(id !== 'oauth')
      expect(registrations.some((way) => way !== 'api-key')).toBe(true)
      for (const way of registrations) expect(REGISTRATIONS[way]).toBeTruthy()
    }
  })
})
