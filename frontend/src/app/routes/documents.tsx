import { useOutletContext } from 'react-router'

import type { Me } from '@/features/auth/api/get-me'
import { DocumentsBrowser } from '@/features/documents/components/documents-browser'

import { canEditDocument, canWrite } from './permissions'
import { usePageTitle } from '@/lib/page-title'

export function DocumentsRoute() {
  usePageTitle('Documents')
  const me = useOutletContext<Me>()
  return (
    <div className="mx-auto max-w-6xl">
      <DocumentsBrowser
        meId={me.id}
        canUpload={canWrite(me)}
        canEdit={(document) => canEditDocument(me, document)}
      />
    </div>
  )
}
