import { useQueryClient } from '@tanstack/react-query'
import {
  CircleStop,
  LoaderCircle,
  MessageCircleQuestion,
  NotebookPen,
  Send,
  Sparkles,
} from 'lucide-react'
import { useEffect, useId, useRef, useState, type ReactNode, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Textarea } from '@/components/ui/input'
import { Skeleton } from '@/components/ui/skeleton'
import { Switch } from '@/components/ui/switch'
import { errorMessage } from '@/lib/api-client'

import type { Citation, Step } from '../api/ask'
import { useCancelRun, useChat, type ChatRun } from '../api/chats'
import { chatKeys } from '../api/keys'
import { useConversation, type AskState, type Turn } from '../api/use-ask'
import { AnswerText, SourceList, StepList, Trace } from './answer'
import { EVERYTHING, ModePills, ScopePickers, type AskMode, type Scope } from './scope'

/**
 * A conversation over `POST /api/ask`: the stored chat's turns (when `chatId` names one), the
 * ones asked here streaming under them, and the question box with its mode pills. The chat
 * screen offers the scope pickers; "Ask about this doc" scopes it to `documentId`. The agents
 * write nothing unless the person turns notes on for a question (`canSaveNotes`: editors and
 * admins); a shared note stays private whenever anything the run read is not shared.
 */
export function Conversation({
  chatId,
  documentId,
  documentTitle,
  canSaveNotes = false,
  showScope = false,
  onChatCreated,
  empty,
}: {
  chatId?: string
  documentId?: string
  documentTitle?: string
  canSaveNotes?: boolean
  showScope?: boolean
  onChatCreated?: (id: string) => void
  empty?: ReactNode
}) {
  const client = useQueryClient()
  // The chat this conversation continues: the one it was opened on, or the one its first
  // answer made.
  const [ownChat, setOwnChat] = useState<string | undefined>(chatId)
  const stored = useChat(ownChat)
  const cancel = useCancelRun(ownChat)
  const adopt = (id: string) => {
    if (ownChat) return
    setOwnChat(id)
    onChatCreated?.(id)
    void client.invalidateQueries({ queryKey: chatKeys.lists })
  }
  const { turns, start, stop, streaming } = useConversation({
    // A deep run's chat exists from its start: the page moves to it at once, so that coming
    // back finds the run (ADR 0030).
    onChat: adopt,
    onDone: (state) => {
      if (state.chatId) {
        adopt(state.chatId)
        void client.invalidateQueries({ queryKey: chatKeys.detail(state.chatId) })
      }
      void client.invalidateQueries({ queryKey: chatKeys.lists })
    },
  })
  const [question, setQuestion] = useState('')
  const [problem, setProblem] = useState<string>()
  const [mode, setMode] = useState<AskMode>('auto')
  const [scope, setScope] = useState<Scope>(EVERYTHING)
  const [saveNotes, setSaveNotes] = useState(false)
  const [shareNotes, setShareNotes] = useState(false)
  const notesId = useId()
  const shareId = useId()
  const end = useRef<HTMLDivElement>(null)

  // The stored chat up to the first turn asked on this page; the turns asked here as this page
  // heard them (the stored chat holds them too once answered, but not why a mode was chosen,
  // and a chip under the pointer should not be made anew when the chat is read back).
  const messages = (stored.data?.messages ?? []).slice(0, turns[0]?.base)
  // The chat's runs that left no turn (under way, or failed), save those this page follows.
  const followed = new Set(turns.map((turn) => turn.state.runId))
  const runs = (stored.data?.runs ?? []).filter((run) => !followed.has(run.id))
  const history = [
    ...messages.map((message) => ({ at: message.created_at, message })),
    ...runs.map((run) => ({ at: run.created_at, run })),
  ].sort((a, b) => a.at.localeCompare(b.at))
  const last = turns.at(-1)
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'end' })
  }, [messages.length, turns.length, last?.state.text, last?.state.steps.length])

  function submit(event: SubmitEvent) {
    event.preventDefault()
    const text = question.trim()
    if (!text) {
      setProblem('Type a question first.')
      return
    }
    // A follow-up waits for the chat it follows: the turns before it are read first.
    if (ownChat && !stored.data) return
    setProblem(undefined)
    setQuestion('')
    const writes = saveNotes ? (shareNotes ? 'org' : 'private') : 'off'
    void start(
      {
        question: text,
        mode,
        writes,
        ...(ownChat ? { chat_id: ownChat } : {}),
        ...(documentId ? { document_ids: [documentId] } : {}),
        ...(showScope && scope.workspaces.length ? { workspaces: scope.workspaces } : {}),
        ...(showScope && scope.persona ? { persona: scope.persona } : {}),
        ...(showScope && scope.tags.length ? { tags: scope.tags } : {}),
      },
      stored.data?.messages.length ?? 0,
    )
  }

  const nothingYet = !ownChat && turns.length === 0
  return (
    <div className="flex h-full min-h-0 min-w-0 flex-col">
      <div className="min-h-0 flex-1 overflow-y-auto overscroll-contain px-4 py-5 md:px-6">
        <div className="mx-auto grid w-full max-w-3xl min-w-0 gap-6">
          {nothingYet ? (
            (empty ?? (
              <div className="grid gap-2 text-sm text-muted-foreground">
                <MessageCircleQuestion className="size-6 text-primary" aria-hidden="true" />
                <p>
                  Ask anything about{' '}
                  <strong className="font-medium text-foreground">{documentTitle ?? 'the corpus'}</strong>. The
                  answer cites the passages it rests on.
                </p>
              </div>
            ))
          ) : null}
          {ownChat && stored.isPending ? (
            <div className="grid gap-3" aria-busy="true" aria-label="Loading the chat">
              <Skeleton className="ml-auto h-10 w-2/3" />
              <Skeleton className="h-24" />
            </div>
          ) : null}
          {ownChat && stored.isError ? <Alert variant="destructive">{errorMessage(stored.error)}</Alert> : null}
          {history.map((item) =>
            'run' in item ? (
              <StoredRun
                key={item.run.id}
                run={item.run}
                stopping={cancel.isPending && cancel.variables === item.run.id}
                onStop={() => { cancel.mutate(item.run.id) }}
              />
            ) : item.message.role === 'user' ? (
              <Question key={item.message.id} text={item.message.content} />
            ) : (
              <AnswerBlock
                key={item.message.id}
                text={item.message.content}
                citations={item.message.citations}
                steps={item.message.trace.filter(isStep)}
                mode={item.message.mode}
                status="done"
              />
            ),
          )}
          {turns.map((turn) => (
            <LiveTurn key={turn.id} turn={turn} />
          ))}
          <div ref={end} />
        </div>
      </div>
      <form
        onSubmit={submit}
        className="grid min-w-0 gap-2 border-t bg-background p-3 md:px-6"
        aria-label={documentId ? 'Ask about this document' : 'Ask the corpus'}
      >
        <div className="mx-auto grid w-full max-w-3xl min-w-0 gap-2">
          <div className="flex min-w-0 flex-wrap items-center gap-2">
            <ModePills value={mode} onChange={setMode} disabled={streaming} />
            {showScope ? <ScopePickers scope={scope} onChange={setScope} disabled={streaming} /> : null}
            {documentId ? (
              <span className="flex min-w-0 items-center gap-1 text-xs text-muted-foreground">
                <Sparkles className="size-3 shrink-0" aria-hidden="true" />
                <span className="truncate">Scoped to this document</span>
              </span>
            ) : null}
          </div>
          <div className="flex min-w-0 items-end gap-2">
            <Textarea
              aria-label="Your question"
              placeholder={
                ownChat ? 'Ask a follow-up…' : documentId ? 'What does this document say about…' : 'Ask the corpus…'
              }
              value={question}
              onChange={(event) => { setQuestion(event.target.value) }}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && !event.shiftKey) {
                  event.preventDefault()
                  if (!streaming) event.currentTarget.form?.requestSubmit()
                }
              }}
              className="min-h-11 flex-1 resize-none"
              rows={2}
              aria-invalid={problem ? true : undefined}
            />
            {/* Keyed apart: the same <button> turned into the submit button while its click
                is dispatched would submit the form (an empty question) as Stop lands. */}
            {streaming ? (
              <Button key="stop" variant="outline" onClick={stop} className="h-11">
                <CircleStop aria-hidden="true" />
                Stop
              </Button>
            ) : (
              <Button key="ask" type="submit" className="h-11">
                <Send aria-hidden="true" />
                Ask
              </Button>
            )}
          </div>
          {problem ? <p role="alert" className="text-xs text-destructive">{problem}</p> : null}
          {canSaveNotes ? (
            <div className="grid min-w-0 gap-1.5 text-xs text-muted-foreground">
              <label htmlFor={notesId} className="flex min-w-0 items-center gap-2">
                <Switch id={notesId} checked={saveNotes} onCheckedChange={setSaveNotes} disabled={streaming} />
                <NotebookPen className="size-3.5 shrink-0" aria-hidden="true" />
                <span className="min-w-0">Let the agent save a note (private to you)</span>
              </label>
              {saveNotes ? (
                <label htmlFor={shareId} className="flex min-w-0 items-center gap-2 pl-11">
                  <Switch id={shareId} checked={shareNotes} onCheckedChange={setShareNotes} disabled={streaming} />
                  <span className="min-w-0">Share it with everyone when all its sources are shared</span>
                </label>
              ) : null}
            </div>
          ) : null}
        </div>
      </form>
    </div>
  )
}

/** A deep run of the chat that has left no turn yet: under way (its turn appears when it
 *  lands; the chat is read again meanwhile), or failed, and why. */
function StoredRun({ run, stopping, onStop }: { run: ChatRun; stopping: boolean; onStop: () => void }) {
  const cancelled = run.error?.startsWith('cancelled')
  return (
    <>
      <Question text={run.question} />
      <article className="grid min-w-0 gap-3" aria-label="Answer" aria-busy={run.status === 'running'}>
        <ModeBadge mode="deep" />
        {run.status === 'running' ? (
          <div className="flex min-w-0 flex-wrap items-center gap-3 text-sm text-muted-foreground" role="status">
            <LoaderCircle className="size-4 shrink-0 animate-spin" aria-hidden="true" />
            <span className="min-w-0 flex-1">Still researching: the answer appears here when it lands, even if you leave.</span>
            <Button variant="outline" size="sm" onClick={onStop} disabled={stopping}>
              <CircleStop aria-hidden="true" />
              Stop
            </Button>
          </div>
        ) : cancelled ? (
          <p className="text-xs text-muted-foreground" role="status">Stopped: the run was cancelled.</p>
        ) : (
          <Alert variant="destructive">The run failed: {run.error ?? 'no reason was given'}</Alert>
        )}
      </article>
    </>
  )
}

function Question({ text }: { text: string }) {
  return (
    <div className="ml-auto max-w-[85%] rounded-2xl rounded-br-sm bg-primary/10 px-4 py-2 text-sm break-words whitespace-pre-wrap">
      {text}
    </div>
  )
}

function ModeBadge({ mode, reason }: { mode: string | null; reason?: string | null }) {
  if (!mode) return null
  return (
    <p className="flex min-w-0 flex-wrap items-center gap-1.5 text-xs text-muted-foreground" data-testid="mode">
      <Badge variant={mode === 'deep' ? 'default' : 'secondary'} className="capitalize">{mode}</Badge>
      {reason ? <span className="min-w-0 break-words">{reason}</span> : null}
    </p>
  )
}

function AnswerBlock({
  text,
  citations,
  steps,
  mode,
  reason,
  status,
  children,
}: {
  text: string
  citations: Citation[]
  steps: Step[]
  mode: string | null
  reason?: string | null
  status: AskState['status']
  children?: ReactNode
}) {
  const streaming = status === 'streaming'
  return (
    <article className="grid min-w-0 gap-3" aria-busy={streaming} aria-label="Answer">
      <ModeBadge mode={mode} reason={reason} />
      {streaming && steps.length ? <StepList steps={steps} /> : null}
      {text ? (
        <div className="min-w-0" data-testid="answer" data-status={status}>
          {streaming ? (
            // While it streams the text is a preview: plain, so half a Markdown mark cannot
            // jump around; `done` brings the answer that stays, rendered.
            <p className="text-sm leading-6 break-words whitespace-pre-wrap">
              {text}
              <span className="ml-0.5 inline-block h-4 w-1.5 animate-pulse bg-foreground align-text-bottom" aria-hidden="true" />
            </p>
          ) : (
            <AnswerText text={text} citations={citations} />
          )}
        </div>
      ) : streaming ? (
        <p className="flex items-center gap-2 text-sm text-muted-foreground">
          <LoaderCircle className="size-4 animate-spin" aria-hidden="true" />
          Thinking…
        </p>
      ) : null}
      {children}
      {!streaming ? <Trace steps={steps} /> : null}
      {!streaming ? <SourceList citations={citations} /> : null}
    </article>
  )
}

function isStep(value: Record<string, unknown>): value is Step {
  return typeof value.kind === 'string' && typeof value.label === 'string'
}

function LiveTurn({ turn }: { turn: Turn }) {
  const { state } = turn
  return (
    <>
      <Question text={turn.question} />
      <AnswerBlock
        text={state.text}
        citations={state.citations}
        steps={state.steps}
        mode={state.mode}
        reason={state.reason}
        status={state.status}
      >
        {state.status === 'stopped' ? (
          <p className="text-xs text-muted-foreground" role="status">Stopped: the run was cancelled.</p>
        ) : null}
        {state.status === 'error' && state.error ? <Alert variant="destructive">{state.error.message}</Alert> : null}
      </AnswerBlock>
    </>
  )
}
