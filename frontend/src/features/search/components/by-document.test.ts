import { describe, expect, it } from 'vitest'

import type { SearchHit } from '../api/search'
import { byDocument } from './search-results'

function hit(document: string, chunk: string): SearchHit {
  return {
    chunk_id: chunk,
    document_id: document,
    title: document,
    workspace: 'default',
    heading_path: [],
    text: '',
    vec_rank: 1,
    kw_rank: null,
    similarity: 0.5,
    score: 0.01,
    matched_terms: [],
    stale: false,
  }
}

describe('byDocument', () => {
  it('groups hits by document in the order of each one’s best hit, best passage first', () => {
    const groups = byDocument([hit('a', 'a1'), hit('b', 'b1'), hit('a', 'a2'), hit('c', 'c1'), hit('b', 'b2')])
    expect(groups.map((group) => group.map((h) => h.chunk_id))).toEqual([['a1', 'a2'], ['b1', 'b2'], ['c1']])
  })
})
