/**
 * An answer's Markdown as a HAST tree, with each `[n]` that names one of its citations turned
 * into a `<cite-ref data-key="[n]">` element, which the answer renders as a citation chip.
 * Raw HTML is dropped (remark-rehype without `allowDangerousHtml`) and a link whose address has
 * a scheme other than http(s) or mailto loses it: the answer's text comes from documents and a
 * model, so it may not run script here.
 */
import type { Element, ElementContent, Root, Text } from 'hast'
import remarkGfm from 'remark-gfm'
import remarkParse from 'remark-parse'
import remarkRehype from 'remark-rehype'
import { unified } from 'unified'

const processor = unified().use(remarkParse).use(remarkGfm).use(remarkRehype)

const SAFE_URL = /^(?:https?:|mailto:|[^:/?#]*(?:[/?#]|$))/i
const CITATION = /\[\d+\]/g
// Inside code a `[1]` is code, not a citation.
const VERBATIM = new Set(['code', 'pre'])

export const CITE_TAG = 'cite-ref'

export function renderAnswer(text: string, keys: ReadonlySet<string>): Root {
  const tree = processor.runSync(processor.parse(text))
  transform(tree, keys)
  return tree
}

function transform(node: Root | Element, keys: ReadonlySet<string>): void {
  const children: ElementContent[] = []
  for (const child of node.children) {
    if (child.type === 'text') {
      children.push(...splitCitations(child, keys))
      continue
    }
    if (child.type === 'element') {
      for (const attribute of ['href', 'src'] as const) {
        const value = child.properties[attribute]
        if (typeof value === 'string' && !SAFE_URL.test(value.trim())) {
          child.properties[attribute] = undefined
        }
      }
      if (child.tagName === 'a' && typeof child.properties.href === 'string') {
        child.properties.rel = ['noopener', 'noreferrer', 'nofollow']
        child.properties.target = '_blank'
      }
      if (!VERBATIM.has(child.tagName)) transform(child, keys)
    }
    // Markdown makes no doctype: what is left is an element, a comment or raw text.
    if (child.type !== 'doctype') children.push(child)
  }
  node.children = children
}

function splitCitations(node: Text, keys: ReadonlySet<string>): ElementContent[] {
  const parts: ElementContent[] = []
  let last = 0
  for (const match of node.value.matchAll(CITATION)) {
    if (!keys.has(match[0])) continue
    if (match.index > last) parts.push({ type: 'text', value: node.value.slice(last, match.index) })
    parts.push({
      type: 'element',
      tagName: CITE_TAG,
      properties: { dataKey: match[0] },
      children: [],
    })
    last = match.index + match[0].length
  }
  if (last === 0) return [node]
  if (last < node.value.length) parts.push({ type: 'text', value: node.value.slice(last) })
  return parts
}
