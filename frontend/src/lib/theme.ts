import { useCallback, useSyncExternalStore } from 'react'

/** The person's choice; `system` follows the operating system's setting. */
export type ThemeChoice = 'system' | 'light' | 'dark'

const KEY = 'corpus.theme'
const listeners = new Set<() => void>()

function read(): ThemeChoice {
  try {
    const stored = localStorage.getItem(KEY)
    return stored === 'light' || stored === 'dark' ? stored : 'system'
  } catch {
    return 'system'
  }
}

/** Put the choice on <html>: `.dark` or `.light` force a theme, neither follows the system
 *  (index.css's media query). */
export function applyTheme(choice: ThemeChoice = read()): void {
  const root = document.documentElement
  root.classList.toggle('dark', choice === 'dark')
  root.classList.toggle('light', choice === 'light')
}

export function setTheme(choice: ThemeChoice): void {
  try {
    if (choice === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, choice)
  } catch {
    // Storage may be off (a private window); the choice then lasts for this page only.
  }
  applyTheme(choice)
  for (const listener of listeners) listener()
}

function subscribe(listener: () => void) {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** The current choice and a setter; every user of the hook re-renders on a change. */
export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const choice = useSyncExternalStore(subscribe, read, () => 'system' as const)
  return [choice, useCallback((next: ThemeChoice) => { setTheme(next) }, [])]
}
