import { describe, expect, it } from 'vitest'

import type { Me } from '@/features/auth/api/get-me'

import { canEditDocument, canWrite } from './permissions'

function me(role: Me['role']): Me {
  return {
    id: 'me',
    email: 'a@example.com',
    display_name: 'A',
    role,
    kind: 'human',
    persona: null,
    tools: [],
    must_change_password: false,
  }
}

describe('permissions', () => {
  it('offers writing to editors and admins, never to viewers', () => {
    expect([canWrite(me('viewer')), canWrite(me('editor')), canWrite(me('admin'))]).toEqual([
      false,
      true,
      true,
    ])
  })

  it('lets an editor change their own documents and an admin anyone’s org ones', () => {
    const mine = { owner_id: 'me', visibility: 'private' }
    const theirs = { owner_id: 'other', visibility: 'org' }
    const theirPrivate = { owner_id: 'other', visibility: 'private' }
    expect(canEditDocument(me('viewer'), mine)).toBe(false)
    expect(canEditDocument(me('editor'), mine)).toBe(true)
    expect(canEditDocument(me('editor'), theirs)).toBe(false)
    expect(canEditDocument(me('admin'), theirs)).toBe(true)
    expect(canEditDocument(me('admin'), theirPrivate)).toBe(false)
  })
})
