import { useCallback, useEffect, useRef, useState } from 'react'

import { ApiError } from '@/lib/api-client'

import { ask, type AskEvent, type AskRequest, type Citation, type Step } from './ask'
import { cancelRun } from './chats'

export type AskState = {
  status: 'idle' | 'streaming' | 'done' | 'stopped' | 'error'
  mode: string | null
  /** Why the server chose `mode` (said when the asker left it to Auto). */
  reason: string | null
  steps: Step[]
  text: string
  citations: Citation[]
  extractive: boolean
  fellBack: boolean
  chatId: string | null
  /** A deep run kept in a chat goes on without this page (ADR 0030): stopping it is an act
   *  of its own (`POST /api/runs/{id}/cancel`). Null for a run the stream holds. */
  runId: string | null
  error: { code: string; message: string } | null
}

export const IDLE: AskState = {
  status: 'idle',
  mode: null,
  reason: null,
  steps: [],
  text: '',
  citations: [],
  extractive: false,
  fellBack: false,
  chatId: null,
  runId: null,
  error: null,
}

export function reduce(state: AskState, event: AskEvent): AskState {
  switch (event.event) {
    case 'mode':
      return {
        ...state,
        mode: event.data.mode,
        reason: event.data.reason,
        runId: event.data.run_id ?? null,
        chatId: event.data.chat_id ?? state.chatId,
      }
    case 'step':
      return { ...state, steps: [...state.steps, event.data] }
    case 'token':
      return { ...state, text: state.text + event.data.text }
    case 'done':
      // `done` carries the authoritative answer: streamed tokens were a preview of it.
      return {
        ...state,
        status: 'done',
        text: event.data.answer,
        citations: event.data.citations,
        mode: event.data.mode,
        extractive: event.data.extractive,
        fellBack: event.data.fell_back,
        chatId: event.data.chat_id,
      }
    case 'error':
      return { ...state, status: 'error', error: event.data }
  }
}

/** One question of a conversation and what has come of it so far. `base` is how many of the
 *  chat's stored messages came before it. */
export type Turn = { id: number; question: string; base: number; state: AskState }

/** The turns asked on this page, the last one possibly streaming. Asking again aborts the
 *  stream in flight; the server cancels a run its stream holds when its client goes, and lets
 *  a chat's deep run go on (its turn lands in the chat). Stopping cancels the run itself
 *  (`cancelRun`) and then ends the stream. `onChat` hears the chat a run's turn goes to as
 *  soon as it is known, `onDone` each finished answer. */
export function useConversation({
  onDone,
  onChat,
}: { onDone?: (state: AskState) => void; onChat?: (chatId: string) => void } = {}) {
  const [turns, setTurns] = useState<Turn[]>([])
  const controller = useRef<AbortController | null>(null)
  const running = useRef<string | null>(null)
  const nextId = useRef(0)
  const done = useRef(onDone)
  const chat = useRef(onChat)
  useEffect(() => {
    done.current = onDone
    chat.current = onChat
  }, [onDone, onChat])
  // A conversation that leaves the page ends its stream (a chat's deep run goes on).
  useEffect(() => () => controller.current?.abort(), [])

  const start = useCallback(async (input: AskRequest, base: number) => {
    controller.current?.abort()
    const current = new AbortController()
    controller.current = current
    const id = nextId.current++
    const update = (change: (state: AskState) => AskState) => {
      setTurns((previous) =>
        previous.map((turn) => (turn.id === id ? { ...turn, state: change(turn.state) } : turn)),
      )
    }
    setTurns((previous) => [
      ...previous,
      { id, question: input.question, base, state: { ...IDLE, status: 'streaming' } },
    ])
    let last: AskState = { ...IDLE, status: 'streaming' }
    running.current = null
    try {
      for await (const event of await ask(input, current.signal)) {
        last = reduce(last, event)
        const next = last
        update(() => next)
        if (event.event === 'mode') {
          running.current = next.runId
          if (next.chatId) chat.current?.(next.chatId)
        }
      }
      if (last.status === 'streaming') {
        update((previous) => ({
          ...previous,
          status: 'error',
          error: { code: 'incomplete', message: 'The answer stopped before it was finished.' },
        }))
      } else if (last.status === 'done') {
        done.current?.(last)
      }
    } catch (error) {
      if (current.signal.aborted) return
      update((previous) => ({
        ...previous,
        status: 'error',
        error:
          error instanceof ApiError
            ? { code: error.code, message: error.message }
            : { code: 'network', message: 'Could not reach the server.' },
      }))
    }
  }, [])

  const stop = useCallback(() => {
    const run = running.current
    running.current = null
    // A deep run goes on without its stream: it is stopped first, then the stream ends.
    if (run) void cancelRun(run).catch(() => undefined)
    controller.current?.abort()
    setTurns((previous) =>
      previous.map((turn) =>
        turn.state.status === 'streaming' ? { ...turn, state: { ...turn.state, status: 'stopped' } } : turn,
      ),
    )
  }, [])

  const streaming = turns.some((turn) => turn.state.status === 'streaming')
  return { turns, start, stop, streaming }
}
