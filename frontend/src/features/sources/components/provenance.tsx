import { GitCommitHorizontal, TriangleAlert } from 'lucide-react'

import { Badge } from '@/components/ui/badge'

import { useProvenance, type Provenance } from '../api/sources'

function short(commit: string | null | undefined) {
  return commit ? commit.slice(0, 10) : null
}

/** Where a synced document came from (its source's path, the commit of its last change) and,
 *  when code it names changed in later commits, which commits and paths: nothing for a
 *  document no source synced. */
export function DocumentProvenance({ documentId }: { documentId: string }) {
  const provenance = useProvenance(documentId)
  const found: Provenance | null | undefined = provenance.data
  if (!found) return null
  const date = found.commit_date ? new Date(found.commit_date).toLocaleDateString() : null
  return (
    <section aria-label="Provenance" className="mb-4 flex min-w-0 flex-col gap-2 rounded-lg border p-3 text-sm">
      <div className="flex flex-wrap items-center gap-2">
        <GitCommitHorizontal className="size-4 text-muted-foreground" aria-hidden="true" />
        <span className="font-mono text-xs break-all">{found.path}</span>
        {found.commit ? (
          <span className="text-xs text-muted-foreground">
            {found.url ? (
              <a className="underline" href={found.url} target="_blank" rel="noreferrer">
                {short(found.commit)}
              </a>
            ) : (
              short(found.commit)
            )}
            {date ? ` · ${date}` : null}
          </span>
        ) : null}
        <span className="max-w-full min-w-0 truncate text-xs text-muted-foreground">
          from {found.location}
        </span>
        {found.stale ? (
          <Badge variant="destructive">
            <TriangleAlert className="size-3" aria-hidden="true" />
            May be stale
          </Badge>
        ) : null}
      </div>
      {found.stale ? (
        <details>
          <summary className="cursor-pointer text-xs">Code it names changed in {found.stale_commits.length} later {found.stale_commits.length === 1 ? 'commit' : 'commits'}</summary>
          <ul className="mt-1 flex flex-col gap-1 text-xs">
            {found.stale_commits.map((change) => (
              <li key={change.commit} className="break-all">
                <span className="font-mono">{short(change.commit)}</span>{' '}
                {new Date(change.date).toLocaleDateString()}:{' '}
                {[...change.paths, ...change.identifiers.map((name) => `\`${name}\``)].join(', ')}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </section>
  )
}
