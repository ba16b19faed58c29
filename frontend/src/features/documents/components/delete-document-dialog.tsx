import { LoaderCircle, Trash2 } from 'lucide-react'
import { toast } from 'sonner'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import { errorMessage } from '@/lib/api-client'

import { useDeleteDocument } from '../api/documents'

export function DeleteDocumentDialog({
  document,
  open,
  onOpenChange,
  onDeleted,
}: {
  document: { id: string; title: string; chunk_count: number }
  open: boolean
  onOpenChange: (open: boolean) => void
  onDeleted?: () => void
}) {
  const remove = useDeleteDocument()
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (!next) remove.reset()
        onOpenChange(next)
      }}
    >
      <DialogContent role="alertdialog">
        <DialogHeader>
          <DialogTitle>Delete “{document.title}”?</DialogTitle>
          <DialogDescription>
            The document and its {document.chunk_count} chunks are removed for everyone, and
            search and answers stop citing it. This cannot be undone.
          </DialogDescription>
        </DialogHeader>
        {remove.isError ? <Alert variant="destructive">{errorMessage(remove.error)}</Alert> : null}
        <DialogFooter>
          <Button variant="outline" onClick={() => { onOpenChange(false) }}>
            Cancel
          </Button>
          <Button
            variant="destructive"
            disabled={remove.isPending}
            onClick={() => {
              remove.mutate(document.id, {
                onSuccess: () => {
                  toast.success(`“${document.title}” is deleted`)
                  onOpenChange(false)
                  onDeleted?.()
                },
              })
            }}
          >
            {remove.isPending ? (
              <LoaderCircle className="animate-spin" aria-hidden="true" />
            ) : (
              <Trash2 aria-hidden="true" />
            )}
            Delete document
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
