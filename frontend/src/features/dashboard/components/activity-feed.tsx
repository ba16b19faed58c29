import { Bot, FilePen, FilePlus2, KeyRound, LogIn, MessageCircleQuestion, Search } from 'lucide-react'
import { Link } from 'react-router'

import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useActivity, type ActivityItem } from '../api/dashboard'
import { ago } from './panels'

const KINDS: Record<ActivityItem['kind'], { verb: string; icon: typeof Search }> = {
  upload: { verb: 'added', icon: FilePlus2 },
  edit: { verb: 'edited', icon: FilePen },
  question: { verb: 'asked', icon: MessageCircleQuestion },
  search: { verb: 'searched for', icon: Search },
  sign_in: { verb: 'signed in', icon: LogIn },
  key_minted: { verb: 'got a key:', icon: KeyRound },
}

function Avatar({ item }: { item: ActivityItem }) {
  if (item.actor_kind === 'agent') {
    return (
      <span className="flex size-7 shrink-0 items-center justify-center rounded-full bg-muted text-muted-foreground" title="Agent">
        <Bot className="size-4" aria-label="Agent" />
      </span>
    )
  }
  return (
    <span className="flex size-7 shrink-0 items-center justify-center rounded-full bg-primary/15 text-xs font-semibold text-primary" aria-hidden="true">
      {(item.actor ?? '?').slice(0, 1).toUpperCase()}
    </span>
  )
}

/** Uploads, edits, questions, sign-ins and keys minted, newest first: what the caller may see. */
export function ActivityFeed() {
  const activity = useActivity()
  return (
    <Card className="min-w-0">
      <CardHeader>
        <CardTitle>Activity</CardTitle>
        <CardDescription>The latest of what you may see</CardDescription>
      </CardHeader>
      <CardContent>
        {activity.isPending ? (
          <div className="grid gap-2" aria-busy="true" aria-label="Loading activity">
            {[0, 1, 2, 3].map((i) => <Skeleton key={i} className="h-9" />)}
          </div>
        ) : activity.isError ? (
          <p className="text-sm text-destructive">{errorMessage(activity.error)}</p>
        ) : activity.data.items.length === 0 ? (
          <p className="text-sm text-muted-foreground">Uploads, questions and sign-ins will show here.</p>
        ) : (
          <ol className="grid gap-3" aria-label="Activity">
            {activity.data.items.map((item, i) => {
              const { verb, icon: Icon } = KINDS[item.kind]
              return (
                <li key={i} className="flex min-w-0 items-start gap-3 text-sm" data-kind={item.kind}>
                  <Avatar item={item} />
                  <div className="grid min-w-0 flex-1 gap-0.5">
                    <p className="min-w-0 break-words">
                      <span className="font-medium">{item.actor ?? 'Someone'}</span>{' '}
                      <span className="text-muted-foreground">{verb}</span>{' '}
                      {item.kind === 'sign_in' ? null : item.document_id ? (
                        <Link to={`/documents/${item.document_id}`} className="font-medium hover:underline">
                          {item.subject}
                        </Link>
                      ) : (
                        <span className="italic">“{item.subject}”</span>
                      )}
                    </p>
                    <p className="flex items-center gap-1 text-xs text-muted-foreground">
                      <Icon className="size-3" aria-hidden="true" />
                      {ago(item.at)}
                    </p>
                  </div>
                </li>
              )
            })}
          </ol>
        )}
      </CardContent>
    </Card>
  )
}
