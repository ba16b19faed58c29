/**
 * A document's Markdown as a HAST tree ready for React, with what the viewer needs around it:
 * heading ids and a table of contents, and the document split into one `<section
 * id="chunk-{id}">` per chunk, where each chunk's seam can be drawn.
 *
 * Raw HTML in the Markdown is dropped (remark-rehype without `allowDangerousHtml`), and a link
 * or an image whose address has a scheme other than http(s) or mailto loses it, so a
 * document cannot run script in the viewer.
 */
import type { Element, ElementContent, Root, RootContent } from 'hast'
import rehypeHighlight from 'rehype-highlight'
import remarkGfm from 'remark-gfm'
import remarkParse from 'remark-parse'
import remarkRehype from 'remark-rehype'
import { unified } from 'unified'

export type TocEntry = { id: string; depth: number; text: string }

/** A chunk as the viewer places it: `start` and `end` in UTF-16 code units of the content. */
export type PlacedChunk = {
  id: string
  ordinal: number
  headingPath: string[]
  start: number
  end: number
  /** The page of a converted PDF the chunk mostly sits on (from 1). */
  page?: number | null
}

export type Rendered = { tree: Root; toc: TocEntry[] }

/**
 * Where the links of a document lead, as the server resolved them (`GET
 * /api/documents/{id}/links`): keyed by `linkKey(href)`, the id of the document reached, or
 * null when none is in the corpus (for this reader).
 */
export type ResolvedLinks = Map<string, string | null>

/** A link's address compared as the server stored it: Markdown renders `my notes.md` as
 *  `my%20notes.md`, so both sides are compared decoded. */
export function linkKey(href: string): string {
  try {
    return decodeURI(href.trim())
  } catch {
    return href.trim()
  }
}

const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkRehype)
  .use(rehypeHighlight, { detect: false })

/**
 * The server counts offsets in code points (Python's str); JavaScript strings index UTF-16
 * code units, which differ after any character outside the Basic Multilingual Plane (an
 * emoji). Map each offset to its UTF-16 index.
 */
export function toUtf16Offsets(content: string, offsets: number[]): number[] {
  const wanted = [...new Set(offsets)].sort((a, b) => a - b)
  const found = new Map<number, number>()
  let codePoints = 0
  let units = 0
  let next = 0
  for (const character of content) {
    while (next < wanted.length && (wanted[next] ?? 0) <= codePoints) {
      found.set(wanted[next] ?? 0, units)
      next += 1
    }
    codePoints += 1
    units += character.length
  }
  for (; next < wanted.length; next += 1) found.set(wanted[next] ?? 0, units)
  return offsets.map((offset) => found.get(offset) ?? units)
}

export function placeChunks(
  content: string,
  chunks: {
    id: string
    ordinal: number
    heading_path: string[]
    start: number
    end: number
    page?: number | null
  }[],
): PlacedChunk[] {
  const offsets = toUtf16Offsets(
    content,
    chunks.flatMap((chunk) => [chunk.start, chunk.end]),
  )
  return chunks
    .map((chunk, index) => ({
      id: chunk.id,
      ordinal: chunk.ordinal,
      headingPath: chunk.heading_path,
      page: chunk.page ?? null,
      start: offsets[2 * index] ?? 0,
      end: offsets[2 * index + 1] ?? 0,
    }))
    .sort((a, b) => a.start - b.start || a.ordinal - b.ordinal)
}

function textOf(node: ElementContent | RootContent): string {
  if (node.type === 'text') return node.value
  if (node.type === 'element') return node.children.map(textOf).join('')
  return ''
}

function slug(text: string): string {
  const base = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{Letter}\p{Number}\s-]/gu, '')
    .trim()
    .replace(/\s+/g, '-')
  return base || 'section'
}

const SAFE_URL = /^(?:https?:|mailto:|[^:/?#]*(?:[/?#]|$))/i

function visitElements(node: Root | Element, visit: (element: Element) => void): void {
  for (const child of node.children) {
    if (child.type === 'element') {
      visit(child)
      visitElements(child, visit)
    }
  }
}

/** A link to another document of the corpus: its viewer, at the heading the fragment names
 *  (a heading's id is `h-` and its slug, as `decorate` gives it). */
function documentAddress(id: string, href: string): string {
  const hash = href.indexOf('#')
  const fragment = hash >= 0 ? linkKey(href.slice(hash + 1)) : ''
  return fragment ? `/documents/${id}#h-${slug(fragment)}` : `/documents/${id}`
}

/** A link whose document is not in the corpus: plain text that says so, not an address that
 *  leads to "No page here". */
function markMissing(element: Element): void {
  element.tagName = 'span'
  element.properties = { className: ['missing-link'], title: 'Not in the corpus' }
  element.children.push({
    type: 'element',
    tagName: 'span',
    properties: { className: ['missing-link-note'] },
    children: [{ type: 'text', value: ' (not in the corpus)' }],
  })
}

/** Heading ids (unique, `h-` prefixed so no id can clash with `chunk-…`), the contents, the
 *  removal of unsafe addresses, and links to other documents pointed at their viewer. */
function decorate(tree: Root, links: ResolvedLinks): TocEntry[] {
  const toc: TocEntry[] = []
  const used = new Map<string, number>()
  visitElements(tree, (element) => {
    const depth = /^h([1-6])$/.exec(element.tagName)?.[1]
    if (depth) {
      const text = element.children.map(textOf).join('').trim()
      const base = `h-${slug(text)}`
      const count = used.get(base) ?? 0
      used.set(base, count + 1)
      const id = count ? `${base}-${count}` : base
      element.properties.id = id
      toc.push({ id, depth: Number(depth), text })
    }
    for (const attribute of ['href', 'src'] as const) {
      const value = element.properties[attribute]
      if (typeof value === 'string' && !SAFE_URL.test(value.trim())) {
        element.properties[attribute] = undefined
      }
    }
    if (element.tagName === 'a' && typeof element.properties.href === 'string') {
      const href = element.properties.href
      const key = linkKey(href)
      if (links.has(key)) {
        const id = links.get(key)
        if (id) element.properties.href = documentAddress(id, href)
        else markMissing(element)
      } else if (/^https?:/i.test(href)) {
        element.properties.rel = ['noopener', 'noreferrer', 'nofollow']
        element.properties.target = '_blank'
      }
    }
  })
  return toc
}

function seamMarker(chunk: PlacedChunk, inside: boolean): Element {
  const headings = chunk.headingPath.length ? chunk.headingPath.join(' › ') : 'Top of the document'
  const path = chunk.page ? `p. ${chunk.page} · ${headings}` : headings
  return {
    type: 'element',
    tagName: 'div',
    properties: {
      className: ['seam'],
      role: 'separator',
      ariaLabel: `Chunk ${chunk.ordinal + 1}: ${path}`,
      title: inside ? `${path} (cut inside the block above)` : path,
      dataOrdinal: String(chunk.ordinal),
      dataInside: inside ? 'true' : undefined,
    },
    children: [
      {
        type: 'element',
        tagName: 'span',
        properties: { className: ['seam-label'] },
        children: [{ type: 'text', value: `#${chunk.ordinal + 1}` }],
      },
      {
        type: 'element',
        tagName: 'span',
        properties: { className: ['seam-path'] },
        children: [{ type: 'text', value: path }],
      },
    ],
  }
}

/**
 * One section per chunk, in document order: a top-level block belongs to the last chunk that
 * starts at or before it. A chunk that starts inside a block (a long paragraph cut in two)
 * begins at the next block, and its seam says so. Sections are disjoint though chunks may
 * overlap: a seam is where a chunk starts, which is where the document was cut.
 */
function sectionize(tree: Root, chunks: PlacedChunk[], seams: boolean): void {
  if (chunks.length === 0) return
  const groups: RootContent[][] = chunks.map(() => [])
  const inside = chunks.map(() => false)
  let current = 0
  for (const child of tree.children) {
    const start = child.position?.start.offset
    const end = child.position?.end.offset
    if (start !== undefined) {
      let index = 0
      for (let k = 0; k < chunks.length; k += 1) {
        if ((chunks[k]?.start ?? 0) <= start) index = k
      }
      current = index
      if (end !== undefined) {
        chunks.forEach((chunk, k) => {
          if (chunk.start > start && chunk.start < end && textOf(child).trim()) inside[k] = true
        })
      }
    }
    groups[current]?.push(child)
  }
  tree.children = chunks.map((chunk, k) => ({
    type: 'element',
    tagName: 'section',
    properties: {
      id: `chunk-${chunk.id}`,
      className: ['chunk'],
      dataOrdinal: String(chunk.ordinal),
      dataHeadingPath: chunk.headingPath.join(' › '),
    },
    children: [
      ...(seams ? [seamMarker(chunk, inside[k] ?? false)] : []),
      ...((groups[k] ?? []) as ElementContent[]),
    ],
  }))
}

/** The page shows the title above the document: a first heading that repeats it goes. */
function dropRepeatedTitle(tree: Root, title: string): void {
  const first = tree.children.findIndex((node) => node.type === 'element')
  const node = tree.children[first]
  if (node?.type !== 'element' || node.tagName !== 'h1') return
  const text = node.children.map(textOf).join('').trim().toLowerCase()
  if (text === title.trim().toLowerCase()) tree.children.splice(first, 1)
}

export function renderMarkdown(
  content: string,
  options: { chunks?: PlacedChunk[]; seams?: boolean; title?: string; links?: ResolvedLinks } = {},
): Rendered {
  const tree = processor.runSync(processor.parse(content))
  if (options.title) dropRepeatedTitle(tree, options.title)
  const toc = decorate(tree, options.links ?? new Map<string, string | null>())
  sectionize(tree, options.chunks ?? [], options.seams ?? false)
  return { tree, toc }
}
