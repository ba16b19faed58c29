import { clsx, type ClassValue } from 'clsx'
import { twMerge } from 'tailwind-merge'

/** Join class names (clsx's conditionals), the later of two conflicting utilities winning, so a
 *  caller's `className` overrides a primitive's defaults. */
export function cn(...inputs: ClassValue[]): string {
  return twMerge(clsx(inputs))
}
