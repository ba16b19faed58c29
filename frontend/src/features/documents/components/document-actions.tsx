import { Pencil, Trash2 } from 'lucide-react'
import { useState } from 'react'

import { Button } from '@/components/ui/button'

import type { Document } from '../api/documents'
import { DeleteDocumentDialog } from './delete-document-dialog'
import { EditDocumentDialog } from './edit-document-dialog'

export function DocumentActions({ document, onDeleted }: { document: Document; onDeleted: () => void }) {
  const [editing, setEditing] = useState(false)
  const [deleting, setDeleting] = useState(false)
  return (
    <>
      <Button variant="outline" onClick={() => { setEditing(true) }}>
        <Pencil aria-hidden="true" />
        Edit
      </Button>
      <Button
        variant="outline"
        className="text-destructive hover:text-destructive"
        onClick={() => { setDeleting(true) }}
      >
        <Trash2 aria-hidden="true" />
        Delete
      </Button>
      <EditDocumentDialog id={document.id} open={editing} onOpenChange={setEditing} />
      <DeleteDocumentDialog
        document={document}
        open={deleting}
        onOpenChange={setDeleting}
        onDeleted={onDeleted}
      />
    </>
  )
}
