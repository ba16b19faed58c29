const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
]

/** "3 hours ago", "yesterday", "just now". */
export function timeAgo(iso: string, now: number = Date.now()): string {
  const seconds = (new Date(iso).getTime() - now) / 1000
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit)
  }
  return 'just now'
}

export function fullDate(iso: string): string {
  return absolute.format(new Date(iso))
}

export function mediaLabel(mediaType: string, source: string | null): string {
  const extension = source?.split('.').pop()?.toLowerCase()
  if (extension && extension.length <= 5 && source?.includes('.')) return extension.toUpperCase()
  if (mediaType.includes('markdown')) return 'MD'
  if (mediaType.includes('pdf')) return 'PDF'
  return mediaType.split('/').pop()?.toUpperCase() ?? 'TXT'
}
