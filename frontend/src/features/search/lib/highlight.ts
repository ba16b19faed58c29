import { plain } from '@/lib/markdown-text'

/** A snippet cut into plain and matched parts. `terms` are the lexemes the keyword half matched
 *  (stemmed: "rollback", "deploy" for "deploying"), so a word matches when it starts with one. */
export type Part = { text: string; match: boolean }

export function highlight(text: string, terms: string[]): Part[] {
  const stems = terms.map((term) => term.toLowerCase()).filter((term) => term.length > 1)
  if (stems.length === 0) return [{ text, match: false }]
  const parts: Part[] = []
  const word = /[\p{Letter}\p{Number}_]+/gu
  let last = 0
  for (const found of text.matchAll(word)) {
    const lower = found[0].toLowerCase()
    if (!stems.some((stem) => lower.startsWith(stem))) continue
    if (found.index > last) parts.push({ text: text.slice(last, found.index), match: false })
    parts.push({ text: found[0], match: true })
    last = found.index + found[0].length
  }
  if (last < text.length) parts.push({ text: text.slice(last), match: false })
  return parts
}

/** The passage around the first match, so the reason a hit ranked is in view. */
export function excerpt(text: string, terms: string[], size = 320): string {
  const flat = plain(text)
  if (flat.length <= size) return flat
  const lower = flat.toLowerCase()
  const first = Math.min(
    ...terms.map((term) => lower.indexOf(term.toLowerCase())).filter((index) => index >= 0),
  )
  const start = Number.isFinite(first) ? Math.max(0, first - 80) : 0
  const cut = flat.slice(start, start + size)
  return `${start > 0 ? '… ' : ''}${cut.trim()}${start + size < flat.length ? ' …' : ''}`
}
