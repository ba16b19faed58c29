import type { ReactNode } from 'react'

import { cn } from '@/lib/cn'

export type Column = { label: string; className?: string; hidden?: boolean }

/** A table of rows with a header: it scrolls inside its frame on a narrow screen (the frame
 *  is positioned, so nothing inside spills onto the page). A `hidden` column's label is for
 *  screen readers only (a row's actions). */
export function DataTable({ label, columns, children }: { label: string; columns: Column[]; children: ReactNode }) {
  return (
    <div className="relative overflow-x-auto rounded-lg border">
      <table className="w-full text-sm" aria-label={label}>
        <thead className="bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" className={cn('px-3 py-2 font-medium', column.className)}>
                {column.hidden ? <span className="sr-only">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y">{children}</tbody>
      </table>
    </div>
  )
}
