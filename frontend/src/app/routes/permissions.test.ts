import { describe, expect, it } from 'vitest'

import type { Me } from '@/features/auth/api/get-me'

import { canEditDocument, canWrite } from './permissions'

// As `GET /api/me` answers each caller (tests/auth/test_me.py holds the server to these).
const VIEWER: Me['actions'] = ['search']
const EDITOR: Me['actions'] = ['search', 'documents.write']
const ADMIN: Me['actions'] = [
  'search',
  'documents.write',
  'documents.manage',
  'workspaces.manage',
  'people.manage',
  'keys.manage',
  'audit.read',
  'gaps.read',
  'policy.manage',
  'cache.read',
]

function me(actions: Me['actions'], role: Me['role'] = 'admin'): Me {
  return {
    id: 'me',
    email: 'a@example.com',
    display_name: 'A',
    role,
    kind: 'human',
    persona: null,
    tools: [],
    must_change_password: false,
    actions,
  }
}

describe('permissions', () => {
  it('offers writing to those the server lets write, whatever their role', () => {
    expect([canWrite(me(VIEWER, 'viewer')), canWrite(me(EDITOR, 'editor')), canWrite(me(ADMIN))]).toEqual([
      false,
      true,
      true,
    ])
    // The role is not the authority: an answer without the action offers no writing.
    expect(canWrite(me(VIEWER, 'admin'))).toBe(false)
  })

  it('lets a writer change their own documents and a manager anyone’s org ones', () => {
    const mine = { owner_id: 'me', visibility: 'private' }
    const theirs = { owner_id: 'other', visibility: 'org' }
    const theirPrivate = { owner_id: 'other', visibility: 'private' }
    expect(canEditDocument(me(VIEWER, 'viewer'), mine)).toBe(false)
    expect(canEditDocument(me(EDITOR, 'editor'), mine)).toBe(true)
    expect(canEditDocument(me(EDITOR, 'editor'), theirs)).toBe(false)
    expect(canEditDocument(me(ADMIN), theirs)).toBe(true)
    expect(canEditDocument(me(ADMIN), theirPrivate)).toBe(false)
    // A key bound to a workspace keeps managing documents there, and nothing wider.
    expect(canEditDocument(me(['search', 'documents.write', 'documents.manage']), theirs)).toBe(true)
  })
})
