import { useCallback, useRef, useState } from 'react'

import { ApiError } from '@/lib/api-client'

import { ask, type AskEvent, type AskRequest, type Citation, type Step } from './ask'

export type AskState = {
  status: 'idle' | 'streaming' | 'done' | 'error'
  mode: string | null
  steps: Step[]
  text: string
  citations: Citation[]
  extractive: boolean
  fellBack: boolean
  error: { code: string; message: string } | null
}

const IDLE: AskState = {
  status: 'idle',
  mode: null,
  steps: [],
  text: '',
  citations: [],
  extractive: false,
  fellBack: false,
  error: null,
}

export function reduce(state: AskState, event: AskEvent): AskState {
  switch (event.event) {
    case 'mode':
      return { ...state, mode: event.data.mode }
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
      }
    case 'error':
      return { ...state, status: 'error', error: event.data }
  }
}

/** One question at a time: a new one (or stop) aborts the stream in flight. */
export function useAsk() {
  const [state, setState] = useState<AskState>(IDLE)
  const controller = useRef<AbortController | null>(null)

  const start = useCallback(async (input: AskRequest) => {
    controller.current?.abort()
    const current = new AbortController()
    controller.current = current
    setState({ ...IDLE, status: 'streaming' })
    try {
      for await (const event of await ask(input, current.signal)) {
        setState((previous) => reduce(previous, event))
      }
      setState((previous) =>
        previous.status === 'streaming'
          ? { ...previous, status: 'error', error: { code: 'incomplete', message: 'The answer stopped before it was finished.' } }
          : previous,
      )
    } catch (error) {
      if (current.signal.aborted) return
      setState((previous) => ({
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
    setState((previous) => (previous.status === 'streaming' ? { ...previous, status: 'done' } : previous))
  }, [])

  return { state, start, stop }
}
