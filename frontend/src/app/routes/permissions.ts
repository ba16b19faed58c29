import type { Me } from '@/features/auth/api/get-me'

export type Action = Me['actions'][number]

/** What the screens offer, derived from the actions `GET /api/me` says the caller may take
 *  (the server's capability table decides; this only hides what it would refuse). */
export function may(me: Me, action: Action): boolean {
  return me.actions.includes(action)
}

/** Adding documents, and changing one's own. */
export function canWrite(me: Me): boolean {
  return may(me, 'documents.write')
}

/** One's own documents with `documents.write`; anyone's `org` ones with `documents.manage`
 *  too (a `private` document stays its owner's). */
export function canEditDocument(
  me: Me,
  document: { owner_id: string | null; visibility: string },
): boolean {
  if (!canWrite(me)) return false
  if (document.owner_id === me.id) return true
  return may(me, 'documents.manage') && document.visibility === 'org'
}
