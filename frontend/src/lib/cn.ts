/** Join class names, skipping falsy values. (Swap for clsx + tailwind-merge if needed.) */
export function cn(...classes: Array<string | false | null | undefined>): string {
  return classes.filter(Boolean).join(' ')
}
