import { Tooltip } from '@/components/ui/tooltip'
import { cn } from '@/lib/cn'

import type { SearchHit } from '../api/search'

function RankBadge({ label, value, help, missing }: { label: string; value: string; help: string; missing: boolean }) {
  return (
    <Tooltip content={help}>
      <span
        tabIndex={0}
        data-testid={`rank-${label}`}
        className={cn(
          'inline-flex items-center gap-1 rounded-md border px-1.5 py-0.5 font-mono text-[11px] leading-4 focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
          missing ? 'border-dashed text-muted-foreground' : 'bg-muted/60 text-foreground',
        )}
      >
        <span className="text-muted-foreground">{label}</span>
        {value}
      </span>
    </Tooltip>
  )
}

/** Why a hit ranked: its place in the dense list, in the keyword list, and the fused score. */
export function RankBadges({ hit }: { hit: SearchHit }) {
  const similarity = hit.similarity === null ? '' : ` (cosine similarity ${hit.similarity.toFixed(3)})`
  return (
    <div className="flex flex-wrap items-center gap-1.5" aria-label="Ranks">
      <RankBadge
        label="vec"
        value={hit.vec_rank === null ? '—' : `#${hit.vec_rank}`}
        missing={hit.vec_rank === null}
        help={
          hit.vec_rank === null
            ? 'Meaning search did not find this passage close enough to the question.'
            : `Rank ${hit.vec_rank} by meaning: embedding nearness to the question${similarity}.`
        }
      />
      <RankBadge
        label="kw"
        value={hit.kw_rank === null ? '—' : `#${hit.kw_rank}`}
        missing={hit.kw_rank === null}
        help={
          hit.kw_rank === null
            ? 'Keyword search (BM25) did not match this passage.'
            : `Rank ${hit.kw_rank} by keywords: BM25 over the words of the question.`
        }
      />
      <RankBadge
        label="rrf"
        value={hit.score.toFixed(3)}
        missing={false}
        help="Reciprocal rank fusion: the two ranks combined, 1/(60+rank) each. Higher is better."
      />
    </div>
  )
}
