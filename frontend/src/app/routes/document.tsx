import { MessageCircleQuestion } from 'lucide-react'
import { useState } from 'react'
import { useNavigate, useOutletContext, useParams } from 'react-router'

import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Conversation } from '@/features/ask/components/conversation'
import type { Me } from '@/features/auth/api/get-me'
import { useDocument } from '@/features/documents/api/documents'
import { DocumentViewer } from '@/features/documents/components/document-viewer'
import { DocumentProvenance } from '@/features/sources/components/provenance'

import { canEditDocument, canWrite } from './permissions'
import { usePageTitle } from '@/lib/page-title'

export function DocumentRoute() {
  const { id = '' } = useParams()
  const me = useOutletContext<Me>()
  const navigate = useNavigate()
  const [asking, setAsking] = useState(false)
  const document = useDocument(id)
  usePageTitle(document.data?.title)
  return (
    <div className="mx-auto max-w-7xl">
      <DocumentProvenance key={`provenance-${id}`} documentId={id} />
      <DocumentViewer
        key={id}
        id={id}
        canEdit={(doc) => canEditDocument(me, doc)}
        onDeleted={() => { void navigate('/documents', { replace: true }) }}
        actions={
          <Button variant="outline" onClick={() => { setAsking(true) }}>
            <MessageCircleQuestion aria-hidden="true" />
            Ask about this doc
          </Button>
        }
      />
      <Dialog open={asking} onOpenChange={setAsking}>
        <DialogContent side="right" className="max-w-lg min-w-0 overflow-hidden">
          <DialogHeader className="min-w-0 border-b p-5">
            <DialogTitle>Ask about this doc</DialogTitle>
            <DialogDescription className="truncate">{document.data?.title}</DialogDescription>
          </DialogHeader>
          <Conversation
            documentId={id}
            documentTitle={document.data?.title ?? 'this document'}
            canSaveNotes={canWrite(me)}
          />
        </DialogContent>
      </Dialog>
    </div>
  )
}
