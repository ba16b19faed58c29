import { describe, expect, it } from 'vitest'

import { safeNext } from './safe-next'

const ORIGIN = 'https://kb.example.com'

describe('safeNext', () => {
  it.each([
    [null, '/'],
    ['/oauth/consent?tx=abc', '/oauth/consent?tx=abc'],
    ['/documents', '/documents'],
    ['/documents/1#chunk-2', '/documents/1#chunk-2'],
    ['//evil.example/login', '/'],
    ['/\\evil.example/login', '/'],
    ['/\t/evil.example/login', '/'],
    ['https://evil.example/login', '/'],
    ['javascript:alert(1)', '/'],
    ['/login?next=/login', '/'],
  ])('sends %j only to a page of this site (%s)', (next, expected) => {
    expect(safeNext(next, ORIGIN)).toBe(expected)
  })
})
