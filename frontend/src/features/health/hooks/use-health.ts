import { useCallback, useEffect, useState } from 'react'

import { getHealth, type Health } from '@/features/health/api/get-health'

export type HealthState =
  | { status: 'loading' }
  | { status: 'success'; data: Health }
  | { status: 'error'; message: string }

/** Loads server health once on mount; `refresh()` checks again. */
export function useHealth(): { state: HealthState; refresh: () => void } {
  const [state, setState] = useState<HealthState>({ status: 'loading' })
  const [attempt, setAttempt] = useState(0)

  useEffect(() => {
    const controller = new AbortController()
    getHealth(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ status: 'success', data })
      },
      (error: unknown) => {
        if (controller.signal.aborted) return
        const message = error instanceof Error ? error.message : String(error)
        setState({ status: 'error', message })
      },
    )
    return () => controller.abort()
  }, [attempt])

  const refresh = useCallback(() => {
    setState({ status: 'loading' })
    setAttempt((n) => n + 1)
  }, [])

  return { state, refresh }
}
