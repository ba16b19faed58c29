import { MessageSquare, MoreHorizontal, Pencil, Plus, Search, Trash2 } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'
import { NavLink } from 'react-router'
import { toast } from 'sonner'

import { Button } from '@/components/ui/button'
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog'
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'

import { useChats, useDeleteChat, useRenameChat, type Chat } from '../api/chats'

/** The person's chats, latest first, searchable by title; each one renamed or deleted from
 *  its menu. `onDeleted` hears a chat that went, so the screen can leave it. */
export function ChatList({ onNew, onDeleted }: { onNew: () => void; onDeleted: (id: string) => void }) {
  const [q, setQ] = useState('')
  const chats = useChats(q.trim())
  const [renaming, setRenaming] = useState<Chat | null>(null)
  const [deleting, setDeleting] = useState<Chat | null>(null)
  return (
    <div className="flex h-full min-h-0 flex-col">
      <div className="grid gap-2 border-b p-3">
        <Button onClick={onNew} className="w-full">
          <Plus aria-hidden="true" />
          New chat
        </Button>
        <div className="relative">
          <Search className="pointer-events-none absolute top-1/2 left-2.5 size-3.5 -translate-y-1/2 text-muted-foreground" aria-hidden="true" />
          <Input
            type="search"
            value={q}
            onChange={(event) => { setQ(event.target.value) }}
            placeholder="Search chats…"
            aria-label="Search chats by title"
            className="h-8 pl-8 text-xs"
          />
        </div>
      </div>
      <nav aria-label="Chats" className="min-h-0 flex-1 overflow-y-auto p-2">
        {chats.isPending ? (
          <div className="grid gap-1.5" aria-busy="true" aria-label="Loading chats">
            {[0, 1, 2, 3].map((i) => <Skeleton key={i} className="h-8" />)}
          </div>
        ) : chats.isError ? (
          <p className="p-2 text-xs text-destructive">{errorMessage(chats.error)}</p>
        ) : chats.data.items.length === 0 ? (
          <p className="p-2 text-xs text-muted-foreground">
            {q.trim() ? 'No chat has that in its title.' : 'Your chats appear here once you ask something.'}
          </p>
        ) : (
          <ul className="grid grid-cols-1 gap-0.5">
            {chats.data.items.map((chat) => (
              <li key={chat.id} className="group relative min-w-0">
                <NavLink
                  to={`/chat/${chat.id}`}
                  className={({ isActive }) =>
                    cn(
                      'flex h-8 min-w-0 items-center gap-2 rounded-md pr-8 pl-2.5 text-sm focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                      isActive ? 'bg-muted font-medium text-foreground' : 'text-muted-foreground hover:bg-muted/60 hover:text-foreground',
                    )
                  }
                >
                  <MessageSquare className="size-3.5 shrink-0" aria-hidden="true" />
                  <span className="truncate">{chat.title}</span>
                </NavLink>
                <DropdownMenu>
                  <DropdownMenuTrigger asChild>
                    <Button
                      variant="ghost"
                      size="icon-sm"
                      className="absolute top-0.5 right-0.5 size-7 text-muted-foreground"
                      aria-label={`Actions for ${chat.title}`}
                    >
                      <MoreHorizontal aria-hidden="true" />
                    </Button>
                  </DropdownMenuTrigger>
                  <DropdownMenuContent align="end">
                    <DropdownMenuItem onSelect={() => { setRenaming(chat) }}>
                      <Pencil aria-hidden="true" />
                      Rename
                    </DropdownMenuItem>
                    <DropdownMenuItem destructive onSelect={() => { setDeleting(chat) }}>
                      <Trash2 aria-hidden="true" />
                      Delete
                    </DropdownMenuItem>
                  </DropdownMenuContent>
                </DropdownMenu>
              </li>
            ))}
          </ul>
        )}
      </nav>
      {renaming ? <RenameDialog chat={renaming} onClose={() => { setRenaming(null) }} /> : null}
      {deleting ? (
        <DeleteDialog
          chat={deleting}
          onClose={() => { setDeleting(null) }}
          onDeleted={() => {
            onDeleted(deleting.id)
            setDeleting(null)
          }}
        />
      ) : null}
    </div>
  )
}

function RenameDialog({ chat, onClose }: { chat: Chat; onClose: () => void }) {
  const [title, setTitle] = useState(chat.title)
  const rename = useRenameChat()
  function submit(event: SubmitEvent) {
    event.preventDefault()
    rename.mutate(
      { id: chat.id, title: title.trim() },
      {
        onSuccess: () => {
          toast.success('Chat renamed')
          onClose()
        },
      },
    )
  }
  return (
    <Dialog open onOpenChange={(open) => { if (!open) onClose() }}>
      <DialogContent>
        <form onSubmit={submit} className="grid gap-4">
          <DialogHeader>
            <DialogTitle>Rename chat</DialogTitle>
            <DialogDescription>A title you will find it by.</DialogDescription>
          </DialogHeader>
          <div className="grid gap-1.5">
            <Label htmlFor="chat-title">Title</Label>
            <Input
              id="chat-title"
              value={title}
              maxLength={120}
              required
              onChange={(event) => { setTitle(event.target.value) }}
              aria-invalid={rename.isError ? true : undefined}
            />
            {rename.isError ? <p role="alert" className="text-xs text-destructive">{errorMessage(rename.error)}</p> : null}
          </div>
          <DialogFooter>
            <Button variant="outline" onClick={onClose}>Cancel</Button>
            <Button type="submit" disabled={rename.isPending || !title.trim()}>Save</Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  )
}

function DeleteDialog({ chat, onClose, onDeleted }: { chat: Chat; onClose: () => void; onDeleted: () => void }) {
  const remove = useDeleteChat()
  return (
    <Dialog open onOpenChange={(open) => { if (!open) onClose() }}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>Delete this chat?</DialogTitle>
          <DialogDescription className="break-words">
            “{chat.title}” and its answers go for good.
          </DialogDescription>
        </DialogHeader>
        {remove.isError ? <p role="alert" className="text-xs text-destructive">{errorMessage(remove.error)}</p> : null}
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>Cancel</Button>
          <Button
            variant="destructive"
            disabled={remove.isPending}
            onClick={() => {
              remove.mutate(chat.id, {
                onSuccess: () => {
                  toast.success('Chat deleted')
                  onDeleted()
                },
              })
            }}
          >
            Delete
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
