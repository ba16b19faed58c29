import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import { afterEach } from 'vitest'

// `findBy…` and `waitFor` poll until what they look for appears, and fail after this bound.
// Testing Library's default (1 s) is a timing assumption, not a bound: `make test` runs these
// tests beside pytest and the browser tests on a busy machine, where a first render that takes
// a second failed a test whose screen was right. The bound stays: a screen that never comes
// still fails, after 10 s.
configure({ asyncUtilTimeout: 10_000 })

// Vitest runs without globals, so Testing Library cannot register this itself.
afterEach(() => {
  cleanup()
})
