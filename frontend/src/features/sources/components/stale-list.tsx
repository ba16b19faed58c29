import { Link } from 'react-router'

import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'

import { useStaleDocuments } from '../api/sources'

/** Synced documents that may be stale (code they name changed since), for the dashboard:
 *  nothing when there are none. */
export function StaleList() {
  const stale = useStaleDocuments()
  const items = stale.data?.items ?? []
  if (items.length === 0) return null
  return (
    <Card className="min-w-0" aria-labelledby="stale-title">
      <CardHeader>
        <CardTitle id="stale-title">May be stale</CardTitle>
        <CardDescription>Documents whose named code changed in later commits</CardDescription>
      </CardHeader>
      <CardContent>
        <ul className="grid gap-2 text-sm">
          {items.map((item) => (
            <li key={item.document_id} className="flex min-w-0 flex-wrap items-baseline gap-2">
              <Link className="font-medium underline" to={`/documents/${item.document_id}`}>{item.title}</Link>
              <span className="truncate font-mono text-xs text-muted-foreground">{item.workspace} · {item.path}</span>
              <span className="text-xs text-muted-foreground">
                {item.stale_commits.length} later {item.stale_commits.length === 1 ? 'commit' : 'commits'}
              </span>
            </li>
          ))}
        </ul>
      </CardContent>
    </Card>
  )
}
