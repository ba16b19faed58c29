import { List, MessagesSquare } from 'lucide-react'
import { useState } from 'react'
import { useLocation, useNavigate, useOutletContext, useParams } from 'react-router'

import { Button } from '@/components/ui/button'

import { ChatList } from '@/features/ask/components/chat-list'
import { Conversation } from '@/features/ask/components/conversation'
import type { Me } from '@/features/auth/api/get-me'
import { cn } from '@/lib/cn'
import { usePageTitle } from '@/lib/page-title'

import { canWrite } from './permissions'

/** `/chat` and `/chat/:id`: the chat list beside the conversation (on a phone, the
 *  conversation, and the list when asked for until it takes the person somewhere). */
export function ChatRoute() {
  usePageTitle('Chat')
  const { id } = useParams()
  const me = useOutletContext<Me>()
  const navigate = useNavigate()
  const location = useLocation()
  // A conversation that made its chat moves to the chat's address without starting over;
  // any other move (another chat, a new one) starts a conversation afresh.
  const [adopted, setAdopted] = useState<{ id: string; key: string } | null>(null)
  const key = adopted && adopted.id === id ? adopted.key : location.key
  const [listAt, setListAt] = useState<string | null>(null)
  const listing = listAt === location.key
  return (
    <div className="-mx-4 -my-6 flex h-[calc(100svh-3.5rem)] min-w-0 md:-mx-8 md:-my-8">
      <aside
        aria-label="Your chats"
        className={cn('w-full shrink-0 border-r md:block md:w-64', listing ? 'block' : 'hidden')}
      >
        <ChatList
          onNew={() => { void navigate('/chat') }}
          onDeleted={(deleted) => {
            if (deleted === id) void navigate('/chat', { replace: true })
          }}
        />
      </aside>
      <section className={cn('min-w-0 flex-1 flex-col md:flex', listing ? 'hidden' : 'flex')} aria-label="Conversation">
        <div className="border-b px-2 py-1 md:hidden">
          <Button variant="ghost" size="sm" onClick={() => { setListAt(location.key) }}>
            <List aria-hidden="true" />
            All chats
          </Button>
        </div>
        <Conversation
          key={key}
          chatId={id}
          showScope
          canSaveNotes={canWrite(me)}
          onChatCreated={(created) => {
            setAdopted({ id: created, key })
            void navigate(`/chat/${created}`, { replace: true })
          }}
          empty={
            <div className="grid justify-items-center gap-3 pt-10 text-center">
              <span className="flex size-10 items-center justify-center rounded-xl bg-primary/10 text-primary">
                <MessagesSquare className="size-5" aria-hidden="true" />
              </span>
              <h1 className="text-xl font-semibold tracking-tight">Ask the corpus</h1>
              <p className="max-w-md text-sm text-muted-foreground">
                Answers stream as they are found, with the steps taken and chips that open each cited
                passage. Auto picks Fast or Deep for your question and says why.
              </p>
            </div>
          }
        />
      </section>
    </div>
  )
}
