/** A chunk's Markdown read as prose (a search hit's snippet, a citation's preview): no heading marks, fences, list bullets, emphasis or table
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
