import { FileText, Home, Search, UserRound, type LucideIcon } from 'lucide-react'
import { useEffect, useState, type KeyboardEvent } from 'react'
import { useNavigate } from 'react-router'

import { Dialog, DialogContent, DialogTitle } from '@/components/ui/dialog'
import { useDocuments } from '@/features/documents/api/documents'
import { cn } from '@/lib/cn'

type Item = { key: string; label: string; hint?: string; icon: LucideIcon; to: string }

const PAGES: Item[] = [
  { key: 'home', label: 'Home', icon: Home, to: '/' },
  { key: 'search', label: 'Search', icon: Search, to: '/search' },
  { key: 'documents', label: 'Documents', icon: FileText, to: '/documents' },
  { key: 'account', label: 'Account', icon: UserRound, to: '/account' },
]

/** ⌘K (Ctrl+K): jump to a page or a document by its title, or search for what was typed. */
export function CommandPalette() {
  const [open, setOpen] = useState(false)
  useEffect(() => {
    function onKey(event: globalThis.KeyboardEvent) {
      if (event.key.toLowerCase() === 'k' && (event.metaKey || event.ctrlKey)) {
        event.preventDefault()
        setOpen((value) => !value)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => { window.removeEventListener('keydown', onKey) }
  }, [])
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogContent className="top-[15vh] max-w-xl translate-y-0 gap-0 p-0" aria-describedby={undefined}>
        <DialogTitle className="sr-only">Go to</DialogTitle>
        {open ? <Palette onDone={() => { setOpen(false) }} /> : null}
      </DialogContent>
    </Dialog>
  )
}

function Palette({ onDone }: { onDone: () => void }) {
  const navigate = useNavigate()
  const [text, setText] = useState('')
  const [active, setActive] = useState(0)
  const query = text.trim()
  const documents = useDocuments(query ? { q: query } : {})
  const lower = query.toLowerCase()
  const items: Item[] = [
    ...PAGES.filter((page) => page.label.toLowerCase().includes(lower)),
    ...(documents.data?.items.slice(0, 6).map((doc) => ({
      key: doc.id,
      label: doc.title,
      hint: doc.workspace,
      icon: FileText,
      to: `/documents/${doc.id}`,
    })) ?? []),
    ...(query
      ? [{ key: 'search-for', label: `Search for “${query}”`, icon: Search, to: `/search?q=${encodeURIComponent(query)}` }]
      : []),
  ]
  const current = Math.min(active, Math.max(items.length - 1, 0))

  function go(item: Item | undefined) {
    if (!item) return
    onDone()
    void navigate(item.to)
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'ArrowDown') {
      event.preventDefault()
      setActive((current + 1) % Math.max(items.length, 1))
    } else if (event.key === 'ArrowUp') {
      event.preventDefault()
      setActive((current - 1 + items.length) % Math.max(items.length, 1))
    } else if (event.key === 'Enter') {
      event.preventDefault()
      go(items[current])
    }
  }

  return (
    <div className="grid">
      <div className="flex items-center gap-2 border-b pr-12 pl-4">
        <Search className="size-4 text-muted-foreground" aria-hidden="true" />
        <input
          autoFocus
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={items[current] ? `palette-${items[current].key}` : undefined}
          aria-label="Go to a page or a document"
          placeholder="Go to a page or a document…"
          value={text}
          onChange={(event) => {
            setText(event.target.value)
            setActive(0)
          }}
          onKeyDown={onKeyDown}
          className="h-12 flex-1 bg-transparent text-sm outline-none placeholder:text-muted-foreground"
        />
        <kbd className="rounded border px-1.5 font-mono text-[10px] text-muted-foreground">esc</kbd>
      </div>
      <ul id="palette-list" role="listbox" aria-label="Results" className="max-h-80 overflow-y-auto p-2">
        {items.length === 0 ? (
          <li className="px-3 py-6 text-center text-sm text-muted-foreground">Nothing matches.</li>
        ) : (
          items.map((item, index) => (
            <li
              key={item.key}
              id={`palette-${item.key}`}
              role="option"
              aria-selected={index === current}
              onMouseMove={() => { setActive(index) }}
              onClick={() => { go(item) }}
              className={cn(
                'flex cursor-pointer items-center gap-3 rounded-md px-3 py-2 text-sm',
                index === current && 'bg-muted',
              )}
            >
              <item.icon className="size-4 shrink-0 text-muted-foreground" aria-hidden="true" />
              <span className="min-w-0 flex-1 truncate">{item.label}</span>
              {item.hint ? <span className="text-xs text-muted-foreground">{item.hint}</span> : null}
            </li>
          ))
        )}
      </ul>
    </div>
  )
}
