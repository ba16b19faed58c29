import { render } from '@testing-library/react'
import { describe, expect, it } from 'vitest'

import { MarkdownTree } from '../components/markdown'
import { placeChunks, renderMarkdown, toUtf16Offsets } from './markdown'

function html(content: string, options?: Parameters<typeof renderMarkdown>[1]) {
  const { container } = render(<MarkdownTree tree={renderMarkdown(content, options).tree} />)
  return container
}

const DOC = '# Deploy\n\nShip it.\n\n## Rollback\n\nRun `make rollback`.\n\n## Notes\n\nLast words.\n'

function chunksOf(content: string, starts: number[]) {
  return starts.map((start, ordinal) => ({
    id: `c${ordinal}`,
    ordinal,
    heading_path: ordinal === 0 ? ['Deploy'] : ['Deploy', ordinal === 1 ? 'Rollback' : 'Notes'],
    start,
    end: starts[ordinal + 1] ?? content.length,
  }))
}

describe('renderMarkdown', () => {
  it('points a resolved relative link at its document’s heading, and says plainly when one is not in the corpus', () => {
    const container = html(
      '[rollback](../ops/deploy.md#rollback) [notes](<my notes.md>) [gone](missing.md) [web](https://example.com)\n',
      { links: new Map([['../ops/deploy.md#rollback', 'd1'], ['my notes.md', 'd2'], ['missing.md', null]]) },
    )
    const links = [...container.querySelectorAll('a')]
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      '/documents/d1#h-rollback',
      '/documents/d2',
      'https://example.com',
    ])
    const missing = container.querySelector('.missing-link')
    expect(missing).toHaveTextContent('gone (not in the corpus)')
    expect(missing).toHaveAttribute('title', 'Not in the corpus')
  })

  it('drops raw HTML and script addresses rather than injecting them', () => {
    const container = html(
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n' +
        '[click](javascript:alert(3)) [ok](https://example.com) [here](/documents/1)\n',
    )
    expect(container.querySelector('script')).toBeNull()
    expect(container.querySelector('img')).toBeNull()
    const links = [...container.querySelectorAll('a')]
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      null,
      'https://example.com',
      '/documents/1',
    ])
    expect(links[1]).toHaveAttribute('rel', 'noopener noreferrer nofollow')
  })

  it('renders tables and highlights fenced code by its language', () => {
    const container = html('| a | b |\n| - | - |\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```\n')
    expect(container.querySelectorAll('table td')).toHaveLength(2)
    expect(container.querySelector('pre code.language-python .hljs-keyword')).not.toBeNull()
  })

  it('gives headings unique ids that the table of contents links to', () => {
    const { toc } = renderMarkdown('# Setup\n\n## Setup\n\n### Ünïcode title!\n')
    expect(toc).toEqual([
      { id: 'h-setup', depth: 1, text: 'Setup' },
      { id: 'h-setup-1', depth: 2, text: 'Setup' },
      { id: 'h-unicode-title', depth: 3, text: 'Ünïcode title!' },
    ])
    const container = html('# Setup\n\n## Setup\n')
    expect([...container.querySelectorAll('h1, h2')].map((h) => h.id)).toEqual([
      'h-setup',
      'h-setup-1',
    ])
  })
})

describe('the title', () => {
  it('is not repeated when the document opens with it, and kept otherwise', () => {
    expect(renderMarkdown('# Deploy\n\n## Steps\n', { title: 'deploy' }).toc.map((e) => e.text)).toEqual([
      'Steps',
    ])
    expect(renderMarkdown('# Deploy\n\n## Steps\n', { title: 'Other' }).toc).toHaveLength(2)
  })
})

describe('chunk sections and seams', () => {
  const starts = [0, DOC.indexOf('## Rollback'), DOC.indexOf('## Notes')]

  it('puts each block in the section of the chunk that starts at or before it', () => {
    const chunks = placeChunks(DOC, chunksOf(DOC, starts))
    const container = html(DOC, { chunks })
    const sections = [...container.querySelectorAll('section.chunk')]
    expect(sections.map((s) => s.id)).toEqual(['chunk-c0', 'chunk-c1', 'chunk-c2'])
    expect(sections[0]?.textContent).toContain('Ship it.')
    expect(sections[1]?.querySelector('h2')?.textContent).toBe('Rollback')
    expect(sections[1]?.textContent).toContain('make rollback')
    expect(sections[2]?.textContent).toContain('Last words.')
    expect(container.querySelector('.seam')).toBeNull()
  })

  it('draws one seam per chunk with its number and heading path when asked', () => {
    const chunks = placeChunks(DOC, chunksOf(DOC, starts))
    const container = html(DOC, { chunks, seams: true })
    const seams = [...container.querySelectorAll('[role="separator"]')]
    expect(seams.map((s) => s.getAttribute('aria-label'))).toEqual([
      'Chunk 1: Deploy',
      'Chunk 2: Deploy › Rollback',
      'Chunk 3: Deploy › Notes',
    ])
    expect(seams[1]?.closest('section')?.id).toBe('chunk-c1')
  })

  it('names a PDF chunk’s page on its seam', () => {
    const paged = chunksOf(DOC, starts).map((chunk, ordinal) => ({ ...chunk, page: ordinal + 1 }))
    const container = html(DOC, { chunks: placeChunks(DOC, paged), seams: true })
    const seams = [...container.querySelectorAll('[role="separator"]')]
    expect(seams[1]?.getAttribute('aria-label')).toBe('Chunk 2: p. 2 · Deploy › Rollback')
  })

  it('says when a chunk starts inside a block, and still gives it a section', () => {
    const long = '# T\n\nOne very long paragraph that the chunker had to cut in the middle.\n'
    const cut = long.indexOf('had to')
    const chunks = placeChunks(long, chunksOf(long, [0, cut]))
    const container = html(long, { chunks, seams: true })
    const second = container.querySelector('#chunk-c1')
    expect(second).not.toBeNull()
    expect(second?.querySelector('.seam')).toHaveAttribute('data-inside', 'true')
  })

  it('maps the server’s code-point offsets past an emoji to UTF-16 indices', () => {
    const text = 'a😀b\n\nc'
    // Code points: a=0, 😀=1, b=2, \n=3, \n=4, c=5; in UTF-16 the emoji takes two units.
    expect(toUtf16Offsets(text, [0, 2, 5, 6])).toEqual([0, 3, 6, 7])
    expect(text.slice(6, 7)).toBe('c')
  })
})
