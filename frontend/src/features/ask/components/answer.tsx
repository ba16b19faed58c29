import { BookOpen, Brain, ChevronRight, FileText, Search, ShieldCheck, Sparkles, Users } from 'lucide-react'
import { toJsxRuntime, type Components, type Options } from 'hast-util-to-jsx-runtime'
import type { Root } from 'hast'
import { createContext, use, useMemo, type ReactElement } from 'react'
import { Fragment, jsx, jsxs } from 'react/jsx-runtime'
import { Link } from 'react-router'

import { HoverCard } from '@/components/ui/hover-card'
import { cn } from '@/lib/cn'
import { plain } from '@/lib/markdown-text'

import type { Citation, Step } from '../api/ask'
import { CITE_TAG, renderAnswer } from '../lib/answer-markdown'

const STEP_ICONS: Record<string, typeof Search> = {
  search: Search,
  read: BookOpen,
  delegate: Users,
  verify: ShieldCheck,
  think: Brain,
}

// The library types its result as the global `JSX.Element`, which React 19's types no longer
// declare; this is the same function with React's element type.
const toReact = toJsxRuntime as (tree: Root, options: Options) => ReactElement

export function citationHref(citation: Citation): string {
  return `/documents/${citation.document_id}#chunk-${citation.chunk_id}`
}

const Cited = createContext<Map<string, Citation>>(new Map())

/** A `[n]` of the answer: one component for every render, so that a chip a person hovers
 *  stays the same element when the answer is rendered again (the stored chat replacing the
 *  streamed turn). */
function CiteRef(props: { 'data-key'?: string }) {
  const citation = use(Cited).get(props['data-key'] ?? '')
  return citation ? <CitationChip citation={citation} /> : null
}

const COMPONENTS = { [CITE_TAG]: CiteRef } as Partial<Components>

/** The answer's Markdown, each `[n]` a chip that previews its passage and opens it. */
export function AnswerText({ text, citations }: { text: string; citations: Citation[] }) {
  const keys = citations.map((c) => c.key).join()
  const tree = useMemo(() => renderAnswer(text, new Set(keys.split(','))), [text, keys])
  const element = useMemo(() => toReact(tree, { Fragment, jsx, jsxs, components: COMPONENTS }), [tree])
  const byKey = useMemo(() => new Map(citations.map((citation) => [citation.key, citation])), [citations])
  return (
    <Cited value={byKey}>
      <div className="prose-doc prose-answer">{element}</div>
    </Cited>
  )
}

export function CitationChip({ citation }: { citation: Citation }) {
  const number = citation.key.replace(/[[\]]/g, '')
  return (
    <HoverCard content={<CitationPreview citation={citation} />}>
      <Link
        to={citationHref(citation)}
        aria-label={`Source ${number}: ${citation.title}`}
        data-citation={citation.key}
        className="mx-0.5 inline-flex h-4 min-w-4 items-center justify-center rounded-full bg-primary/15 px-1 align-text-top font-mono text-[10px] leading-none font-semibold text-primary no-underline hover:bg-primary hover:text-primary-foreground focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
      >
        {number}
      </Link>
    </HoverCard>
  )
}

/** Where a cited passage is: its headings, and its page in a PDF ("p. 12"). */
function place(citation: Citation): string {
  return [citation.heading_path.join(' › '), citation.page ? `p. ${citation.page}` : '']
    .filter(Boolean)
    .join(' · ')
}

function CitationPreview({ citation }: { citation: Citation }) {
  return (
    <div className="grid gap-1.5" data-testid="citation-preview">
      <p className="flex items-center gap-1.5 font-medium">
        <FileText className="size-3.5 shrink-0 text-muted-foreground" aria-hidden="true" />
        <span className="truncate">{citation.title}</span>
      </p>
      {place(citation) ? <p className="truncate text-xs text-muted-foreground">{place(citation)}</p> : null}
      {citation.workspace ? (
        <p className="truncate text-xs text-muted-foreground">Workspace {citation.workspace}</p>
      ) : null}
      <p className="line-clamp-4 text-xs leading-5 break-words">{plain(citation.snippet)}</p>
      <p className="text-xs text-primary">Open the passage →</p>
    </div>
  )
}

export function SourceList({ citations }: { citations: Citation[] }) {
  if (!citations.length) return null
  return (
    <div className="grid gap-2">
      <h3 className="text-xs font-medium text-muted-foreground">Sources</h3>
      <ul className="grid gap-2 sm:grid-cols-2">
        {citations.map((citation) => (
          <li key={citation.key} className="min-w-0">
            <Link
              to={citationHref(citation)}
              className="grid gap-1 rounded-lg border p-2.5 text-xs hover:bg-muted/60 focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
            >
              <span className="flex min-w-0 items-center gap-1.5 font-medium">
                <span className="rounded-full bg-primary/15 px-1.5 font-mono text-[10px] text-primary">
                  {citation.key.replace(/[[\]]/g, '')}
                </span>
                <span className="truncate">{citation.title}</span>
              </span>
              {place(citation) ? <span className="truncate text-muted-foreground">{place(citation)}</span> : null}
            </Link>
          </li>
        ))}
      </ul>
    </div>
  )
}

export function StepList({ steps, label = 'Steps' }: { steps: Step[]; label?: string }) {
  return (
    <ol className="grid gap-1 text-xs text-muted-foreground" aria-label={label}>
      {steps.map((step, i) => {
        const Icon = STEP_ICONS[step.kind] ?? Sparkles
        return (
          <li key={i} className="flex min-w-0 items-start gap-2">
            <Icon className="mt-0.5 size-3.5 shrink-0" aria-hidden="true" />
            <span className="min-w-0 break-words">
              {step.label}
              {step.detail ? <span className="text-muted-foreground/80"> · {step.detail}</span> : null}
            </span>
          </li>
        )
      })}
    </ol>
  )
}

/** The run's steps folded into a disclosure once the answer is in. */
export function Trace({ steps, className }: { steps: Step[]; className?: string }) {
  if (!steps.length) return null
  return (
    <details className={cn('group rounded-lg border px-3 py-2 text-xs', className)}>
      <summary className="flex cursor-pointer list-none items-center gap-1.5 text-muted-foreground select-none hover:text-foreground">
        <ChevronRight className="size-3.5 transition-transform group-open:rotate-90" aria-hidden="true" />
        Trace · {steps.length} {steps.length === 1 ? 'step' : 'steps'}
      </summary>
      <div className="mt-2">
        <StepList steps={steps} label="Trace" />
      </div>
    </details>
  )
}
