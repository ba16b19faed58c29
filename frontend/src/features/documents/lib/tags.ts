/** Tags as the server keeps them: lower-case, no blanks, each once. */
export function parseTags(text: string): string[] {
  const tags = text
    .split(/[,\s]+/)
    .map((tag) => tag.trim().toLowerCase())
    .filter(Boolean)
  return [...new Set(tags)]
}

const TAG = /^[^,\s]{1,64}$/

export function tagsProblem(tags: string[]): string | undefined {
  const bad = tags.find((tag) => !TAG.test(tag))
  if (bad) return `“${bad}” is not a tag: one word of up to 64 characters, no spaces.`
  if (tags.length > 32) return 'Use at most 32 tags.'
  return undefined
}
