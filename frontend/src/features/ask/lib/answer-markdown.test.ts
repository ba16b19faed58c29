import type { Element, Root } from 'hast'
import { describe, expect, it } from 'vitest'

import { CITE_TAG, renderAnswer } from './answer-markdown'

function elements(node: Root | Element, tag: string): Element[] {
  return node.children.flatMap((child) =>
    child.type === 'element' ? [...(child.tagName === tag ? [child] : []), ...elements(child, tag)] : [],
  )
}

describe('renderAnswer', () => {
  it('turns each [n] that names a citation into a chip, but not inside code or unknown keys', () => {
    const tree = renderAnswer('Run **make rollback** [1][2]. Not `[1]`, nor [9].', new Set(['[1]', '[2]']))
    expect(elements(tree, CITE_TAG).map((e) => e.properties.dataKey)).toEqual(['[1]', '[2]'])
    expect(elements(tree, 'strong')).toHaveLength(1)
    expect(elements(tree, 'code')[0]?.children.map((c) => (c.type === 'text' ? c.value : c.type))).toEqual(['[1]'])
  })

  it('drops raw HTML and addresses with a scheme it does not trust', () => {
    const tree = renderAnswer(
      'See <b>this</b> [x](javascript:alert) [y](https://example.com)\n\n<script>alert(1)</script>',
      new Set(),
    )
    expect(elements(tree, 'b')).toHaveLength(0)
    expect(elements(tree, 'script')).toHaveLength(0)
    const [bad, good] = elements(tree, 'a')
    expect(bad?.properties.href).toBeUndefined()
    expect(good?.properties.href).toBe('https://example.com')
    expect(good?.properties.rel).toEqual(['noopener', 'noreferrer', 'nofollow'])
  })
})
