/**
 * Where to go after signing in: `next` only when it is a page of this site. The browser
 * resolves `next` the way it would navigate, so "//evil.example", "/\\evil.example" or a tab
 * inside "/\t/evil.example" (which a prefix check would pass) lead off-site and are refused.
 */
export function safeNext(next: string | null, origin: string = window.location.origin): string {
  if (!next) return '/'
  let target: URL
  try {
    target = new URL(next, origin)
  } catch {
    return '/'
  }
  if (target.origin !== origin) return '/'
  const path = target.pathname + target.search + target.hash
  return path.startsWith('/login') || path.startsWith('/setup') ? '/' : path
}
