import { useCallback, useEffect, useRef, useState } from 'react'

import { ApiError } from '@/lib/api-client'

import { ask, type AskEvent, type AskRequest, type Citation, type Step } from './ask'

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
  error: null,
}

export function reduce(state: AskState, event: AskEvent): AskState {
  switch (event.event) {
    case 'mode':
      return { ...state, mode: event.data.mode, reason: event.data.reason }
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

/** The turns asked on this page, the last one possibly streaming. Asking again (or stopping)
 *  aborts the stream in flight; stopping aborts the request, and the server cancels the run
 *  when its client goes. `onDone` hears each finished answer (with its chat's id). */
export function useConversation({ onDone }: { onDone?: (state: AskState) => void } = {}) {
  const [turns, setTurns] = useState<Turn[]>([])
  const controller = useRef<AbortController | null>(null)
  const nextId = useRef(0)
  const done = useRef(onDone)
  useEffect(() => {
    done.current = onDone
  }, [onDone])
  // A conversation that leaves the page stops its run.
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
    try {
      for await (const event of await ask(input, current.signal)) {
        last = reduce(last, event)
        const next = last
        update(() => next)
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
