import type { Me } from '@/features/auth/api/get-me'

/** What the screens offer (the server decides; this only hides what it would refuse). Editors
 *  add documents and change their own; admins also change anyone's `org` documents. */
export function canWrite(me: Me): boolean {
  return me.role === 'editor' || me.role === 'admin'
}

export function canEditDocument(
  me: Me,
  document: { owner_id: string | null; visibility: string },
): boolean {
  if (!canWrite(me)) return false
  if (document.owner_id === me.id) return true
  return me.role === 'admin' && document.visibility === 'org'
}
