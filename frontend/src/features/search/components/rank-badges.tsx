import { Tooltip } from '@/components/ui/tooltip'
import { cn } from '@/lib/cn'

import type { SearchHit } from '../api/search'

/** The app's one name for each idea the engine has a term of its own for. The API says
 *  `dense`, `keyword` and `hybrid`, `vec_rank`, `kw_rank` and `score` (the two halves'
 *  scores fused, docs/adr/0033); people read these words, and the engine's terms are in the tooltips. */
export const WORDS = {
  dense: 'Meaning',
  keyword: 'Words',
  hybrid: 'Meaning + words',
  vecRank: 'meaning',
  kwRank: 'words',
  fused: 'fused',
} as const

function RankBadge({ label, value, help, missing, testId }: { label: string; value: string; help: string; missing: boolean; testId: string }) {
  return (
    <Tooltip content={help}>
      <span
        tabIndex={0}
        data-testid={testId}
        className={cn(
          'inline-flex items-center gap-1 rounded-md border px-1.5 py-0.5 text-[11px] leading-4 focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
          missing ? 'border-dashed text-muted-foreground' : 'bg-muted/60 text-foreground',
        )}
      >
        <span className="text-muted-foreground">{label}</span>
        <span className="font-mono">{value}</span>
      </span>
    </Tooltip>
  )
}

/** Why a hit ranked, in plain words: its place among the passages nearest in meaning, among
 *  those matching the words, and the two combined — shown only when both halves found it (a
 *  passage one half alone found has no fusion to speak of). */
export function RankBadges({ hit }: { hit: SearchHit }) {
  const similarity = hit.similarity === null ? '' : `, cosine similarity ${hit.similarity.toFixed(3)}`
  const both = hit.vec_rank !== null && hit.kw_rank !== null
  return (
    <div className="flex flex-wrap items-center gap-1.5" aria-label="Ranks">
      <RankBadge
        testId="rank-vec"
        label={`matched ${WORDS.vecRank}`}
        value={hit.vec_rank === null ? '—' : `#${hit.vec_rank}`}
        missing={hit.vec_rank === null}
        help={
          hit.vec_rank === null
            ? 'Not among the passages nearest in meaning to the question (dense search: vec_rank null).'
            : `Rank ${hit.vec_rank} by meaning: how near its embedding is to the question's (dense search: vec_rank ${hit.vec_rank}${similarity}).`
        }
      />
      <RankBadge
        testId="rank-kw"
        label={`matched ${WORDS.kwRank}`}
        value={hit.kw_rank === null ? '—' : `#${hit.kw_rank}`}
        missing={hit.kw_rank === null}
        help={
          hit.kw_rank === null
            ? 'None of the question’s words matched here (keyword search: kw_rank null).'
            : `Rank ${hit.kw_rank} by the question’s words (keyword search, BM25: kw_rank ${hit.kw_rank}).`
        }
      />
      {both ? (
        <RankBadge
          testId="rank-rrf"
          label={WORDS.fused}
          value={hit.score.toFixed(3)}
          missing={false}
          help={`Both halves combined: the meaning's similarity scaled over its candidates and the words' BM25 as a share of the best, each half weighed by how sure it is for this question (score ${hit.score.toFixed(4)}; 1 is the best of both). Higher scores first.`}
        />
      ) : null}
    </div>
  )
}
