import { describe, expect, it } from 'vitest'

import { plain } from '@/lib/markdown-text'

import { excerpt, highlight } from './highlight'

describe('highlight', () => {
  it('marks words that start with a matched lexeme, case aside', () => {
    expect(highlight('Deploying? Run Rollback now.', ['deploy', 'rollback'])).toEqual([
      { text: 'Deploying', match: true },
      { text: '? Run ', match: false },
      { text: 'Rollback', match: true },
      { text: ' now.', match: false },
    ])
  })

  it('leaves the text whole when nothing matched (a dense-only hit)', () => {
    expect(highlight('A quiet passage.', [])).toEqual([{ text: 'A quiet passage.', match: false }])
  })

  it('cuts a long passage around its first match', () => {
    const text = `${'filler '.repeat(100)}rollback here${' tail'.repeat(100)}`
    const cut = excerpt(text, ['rollback'])
    expect(cut.startsWith('… ')).toBe(true)
    expect(cut).toContain('rollback here')
    expect(cut.length).toBeLessThan(340)
  })
})

describe('plain', () => {
  it('reads a chunk’s Markdown as prose', () => {
    expect(plain('## Rollback\n\nRun `make rollback`:\n\n```bash\nmake it\n```\n\n| a | b |\n| - | - |\n| [x](/d) | **y** |')).toBe(
      'Rollback Run make rollback: make it a b x y',
    )
  })

  it('keeps every character of identifiers, taking away only emphasis marks', () => {
    expect(plain('Set `KEY_ID` and CORPUS_OPEN_SIGNUP, _really_ **now** or *soon*; __init__ too.')).toBe(
      'Set KEY_ID and CORPUS_OPEN_SIGNUP, really now or soon; init too.',
    )
    expect(plain('- snake_case_name\n* a_b')).toBe('snake_case_name a_b')
  })
})
