import type { ComponentProps } from 'react'

import { cn } from '@/lib/cn'

export const fieldClass = cn(
  'flex w-full min-w-0 rounded-lg border bg-background px-3 text-sm shadow-xs transition-colors',
  'placeholder:text-muted-foreground',
  'focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-1 focus-visible:ring-offset-background',
  'disabled:cursor-not-allowed disabled:opacity-50',
  'aria-invalid:border-destructive aria-invalid:ring-destructive/30',
)

export function Input({ className, type = 'text', ...props }: ComponentProps<'input'>) {
  return <input type={type} className={cn(fieldClass, 'h-9 py-1', className)} {...props} />
}

export function Textarea({ className, ...props }: ComponentProps<'textarea'>) {
  return <textarea className={cn(fieldClass, 'min-h-24 py-2 leading-relaxed', className)} {...props} />
}

/** A native select: keyboard and screen readers get the platform's own control. */
export function NativeSelect({ className, ...props }: ComponentProps<'select'>) {
  return <select className={cn(fieldClass, 'h-9 py-1 pr-8', className)} {...props} />
}
