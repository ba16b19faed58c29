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

/** A chunk's Markdown read as prose: no heading marks, fences, list bullets, emphasis or table
 *  rules. Every character of the text stays: an underscore inside a word (`KEY_ID`,
 *  `CORPUS_OPEN_SIGNUP`) is not emphasis, and only marks that open and close emphasis go. */
export function plain(markdown: string): string {
  return markdown
    .replace(/^```.*$/gm, ' ')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*\|?[\s:|-]+\|[\s:|-]*$/gm, ' ')
    .replace(/^\s*[*+-]\s+/gm, '')
    .replace(/\|/g, ' ')
    .replace(/`+/g, '')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\p{Letter}\p{Number}*_])([*_])(?=\S)(.+?)(?<=\S)\2(?![\p{Letter}\p{Number}*_])/gmu, '$1$3')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}
