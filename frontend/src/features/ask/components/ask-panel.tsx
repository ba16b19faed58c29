import {
  BookOpen,
  Brain,
  CircleStop,
  LoaderCircle,
  MessageCircleQuestion,
  NotebookPen,
  Search,
  Send,
  ShieldCheck,
  Sparkles,
  Users,
} from 'lucide-react'
import { useId, useState, type SubmitEvent } from 'react'
import { Link } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { Textarea } from '@/components/ui/input'
import { Switch } from '@/components/ui/switch'
import { cn } from '@/lib/cn'

import type { Citation, Step } from '../api/ask'
import { useAsk } from '../api/use-ask'

const STEP_ICONS: Record<string, typeof Search> = {
  search: Search,
  read: BookOpen,
  delegate: Users,
  verify: ShieldCheck,
  think: Brain,
}

/** A question about one document, answered through `POST /api/ask` scoped to it. The agent
 *  writes nothing unless the person turns notes on for this question (`canSaveNotes`: editors
 *  and admins); a shared note stays private whenever anything the run read is not shared. */
export function AskPanel({
  documentId,
  title,
  canSaveNotes = false,
}: {
  documentId: string
  title: string
  canSaveNotes?: boolean
}) {
  const { state, start, stop } = useAsk()
  const [question, setQuestion] = useState('')
  const [problem, setProblem] = useState<string>()
  const [saveNotes, setSaveNotes] = useState(false)
  const [shareNotes, setShareNotes] = useState(false)
  const notesId = useId()
  const shareId = useId()

  function submit(event: SubmitEvent) {
    event.preventDefault()
    const text = question.trim()
    if (!text) {
      setProblem('Type a question first.')
      return
    }
    setProblem(undefined)
    const writes = saveNotes ? (shareNotes ? 'org' : 'private') : 'off'
    void start({ question: text, mode: 'fast', document_ids: [documentId], writes })
  }

  const streaming = state.status === 'streaming'
  return (
    <div className="flex h-full min-h-0 flex-col">
      <div className="min-h-0 flex-1 overflow-y-auto p-5">
        {state.status === 'idle' ? (
          <div className="grid gap-2 text-sm text-muted-foreground">
            <MessageCircleQuestion className="size-6 text-primary" aria-hidden="true" />
            <p>
              Ask anything about <strong className="font-medium text-foreground">{title}</strong>.
              The answer cites the chunks it rests on.
            </p>
          </div>
        ) : (
          <div className="grid gap-4" aria-live="polite" aria-busy={streaming}>
            {state.steps.length ? (
              <ol className="grid gap-1 text-xs text-muted-foreground" aria-label="Steps">
                {state.steps.map((step, i) => (
                  <StepRow key={i} step={step} />
                ))}
              </ol>
            ) : null}
            {state.text ? (
              <div className="text-sm leading-6 whitespace-pre-wrap" data-testid="answer">
                <AnswerText text={state.text} citations={state.citations} />
                {streaming ? <span className="ml-0.5 inline-block h-4 w-1.5 animate-pulse bg-foreground align-text-bottom" aria-hidden="true" /> : null}
              </div>
            ) : streaming ? (
              <p className="flex items-center gap-2 text-sm text-muted-foreground">
                <LoaderCircle className="size-4 animate-spin" aria-hidden="true" />
                Thinking…
              </p>
            ) : null}
            {state.status === 'done' && state.extractive ? (
              <p className="text-xs text-muted-foreground">
                No language model is configured: these are the best passages, quoted.
              </p>
            ) : null}
            {state.citations.length ? (
              <div className="grid gap-2">
                <h3 className="text-xs font-medium text-muted-foreground">Sources</h3>
                <ul className="grid gap-2">
                  {state.citations.map((citation) => (
                    <li key={citation.key}>
                      <CitationCard citation={citation} />
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
            {state.status === 'error' && state.error ? (
              <Alert variant="destructive">{state.error.message}</Alert>
            ) : null}
          </div>
        )}
      </div>
      <form onSubmit={submit} className="grid gap-2 border-t p-4" aria-label="Ask about this document">
        <Textarea
          aria-label="Your question"
          placeholder="What does this document say about…"
          value={question}
          onChange={(event) => { setQuestion(event.target.value) }}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault()
              event.currentTarget.form?.requestSubmit()
            }
          }}
          className="min-h-16 resize-none"
          aria-invalid={problem ? true : undefined}
        />
        {problem ? <p role="alert" className="text-xs text-destructive">{problem}</p> : null}
        {canSaveNotes ? (
          <div className="grid gap-1.5 text-xs text-muted-foreground">
            <label htmlFor={notesId} className="flex items-center gap-2">
              <Switch id={notesId} checked={saveNotes} onCheckedChange={setSaveNotes} disabled={streaming} />
              <NotebookPen className="size-3.5" aria-hidden="true" />
              Let the agent save a note (private to you)
            </label>
            {saveNotes ? (
              <label htmlFor={shareId} className="flex items-center gap-2 pl-11">
                <Switch id={shareId} checked={shareNotes} onCheckedChange={setShareNotes} disabled={streaming} />
                Share it with everyone when all its sources are shared
              </label>
            ) : null}
          </div>
        ) : null}
        <div className="flex items-center justify-between gap-2">
          <span className="flex items-center gap-1 text-xs text-muted-foreground">
            <Sparkles className="size-3" aria-hidden="true" />
            Scoped to this document
          </span>
          {streaming ? (
            <Button variant="outline" onClick={stop}>
              <CircleStop aria-hidden="true" />
              Stop
            </Button>
          ) : (
            <Button type="submit">
              <Send aria-hidden="true" />
              Ask
            </Button>
          )}
        </div>
      </form>
    </div>
  )
}

function StepRow({ step }: { step: Step }) {
  const Icon = STEP_ICONS[step.kind] ?? Sparkles
  return (
    <li className="flex items-start gap-2">
      <Icon className="mt-0.5 size-3.5 shrink-0" aria-hidden="true" />
      <span className="min-w-0 truncate">
        {step.label}
        {step.detail ? <span className="text-muted-foreground/80"> · {step.detail}</span> : null}
      </span>
    </li>
  )
}

/** The answer with each `[n]` as a chip that opens its chunk. */
function AnswerText({ text, citations }: { text: string; citations: Citation[] }) {
  const byKey = new Map(citations.map((citation) => [citation.key, citation]))
  const parts = text.split(/(\[\d+\])/g)
  return (
    <>
      {parts.map((part, i) => {
        const citation = byKey.get(part)
        if (!citation) return <span key={i}>{part}</span>
        return (
          <Link
            key={i}
            to={`/documents/${citation.document_id}#chunk-${citation.chunk_id}`}
            title={`${citation.title} › ${citation.heading_path.join(' › ')}`}
            className="mx-0.5 inline-flex h-4 min-w-4 items-center justify-center rounded-full bg-primary/15 px-1 align-text-top font-mono text-[10px] font-semibold text-primary hover:bg-primary hover:text-primary-foreground"
          >
            {part.slice(1, -1)}
          </Link>
        )
      })}
    </>
  )
}

function CitationCard({ citation }: { citation: Citation }) {
  return (
    <Link
      to={`/documents/${citation.document_id}#chunk-${citation.chunk_id}`}
      className={cn('grid gap-1 rounded-lg border p-2.5 text-xs hover:bg-muted/60')}
    >
      <span className="flex items-center gap-1.5 font-medium">
        <span className="rounded-full bg-primary/15 px-1.5 font-mono text-[10px] text-primary">
          {citation.key.replace(/[[\]]/g, '')}
        </span>
        <span className="truncate">{citation.heading_path.join(' › ') || citation.title}</span>
      </span>
      <span className="line-clamp-2 text-muted-foreground">{citation.snippet}</span>
    </Link>
  )
}
