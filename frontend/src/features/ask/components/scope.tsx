import { Check, ChevronDown, FolderTree, Tags, UserRoundCog } from 'lucide-react'
import { useId, type ReactNode } from 'react'

import { Button } from '@/components/ui/button'
import {
  DropdownMenu,
  DropdownMenuCheckboxItem,
  DropdownMenuContent,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuItem,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { NativeSelect } from '@/components/ui/input'
import { cn } from '@/lib/cn'
import { useWorkspaces } from '@/lib/workspaces'

import { usePolicy, useTags } from '../api/chats'

export type AskMode = 'auto' | 'fast' | 'deep'

const MODES: { value: AskMode; label: string; hint: string }[] = [
  { value: 'auto', label: 'Auto', hint: 'Corpus picks Fast or Deep for the question, and says why' },
  { value: 'fast', label: 'Fast', hint: 'One agent searches and answers: seconds' },
  { value: 'deep', label: 'Deep', hint: 'Researchers in parallel and a verifier: slower, more thorough' },
]

/** Auto, Fast or Deep, as a row of pills (a radio group for the keyboard). */
export function ModePills({
  value,
  onChange,
  disabled,
}: {
  value: AskMode
  onChange: (mode: AskMode) => void
  disabled?: boolean
}) {
  return (
    <div role="radiogroup" aria-label="Mode" className="inline-flex rounded-full border bg-muted/40 p-0.5">
      {MODES.map((mode) => {
        const checked = mode.value === value
        return (
          <button
            key={mode.value}
            type="button"
            role="radio"
            aria-checked={checked}
            title={mode.hint}
            disabled={disabled}
            onClick={() => { onChange(mode.value) }}
            onKeyDown={(event) => {
              const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
              if (!step) return
              event.preventDefault()
              const index = MODES.findIndex((m) => m.value === value)
              const next = MODES[(index + step + MODES.length) % MODES.length]
              if (next) onChange(next.value)
            }}
            tabIndex={checked ? 0 : -1}
            className={cn(
              'h-6 rounded-full px-2.5 text-xs font-medium transition-colors focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none disabled:opacity-50',
              checked ? 'bg-background text-foreground shadow-xs' : 'text-muted-foreground hover:text-foreground',
            )}
          >
            {mode.label}
          </button>
        )
      })}
    </div>
  )
}

/** A pill that opens a checklist: none chosen means every one (`none` says so). */
function ChecklistMenu({
  icon,
  heading,
  none,
  some,
  options,
  chosen,
  onChange,
  disabled,
}: {
  icon: ReactNode
  heading: string
  none: string
  some: (chosen: string[]) => string
  options: { value: string; label: string; count?: number }[]
  chosen: string[]
  onChange: (chosen: string[]) => void
  disabled?: boolean
}) {
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button variant="outline" size="sm" disabled={disabled} className="max-w-48 rounded-full">
          {icon}
          <span className="truncate">{chosen.length === 0 ? none : some(chosen)}</span>
          <ChevronDown aria-hidden="true" />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="start" className="max-h-72 w-60 overflow-y-auto">
        <DropdownMenuLabel>{heading}</DropdownMenuLabel>
        <DropdownMenuItem onSelect={() => { onChange([]) }}>
          {chosen.length === 0 ? <Check aria-hidden="true" /> : <span className="size-4" />}
          {none}
        </DropdownMenuItem>
        <DropdownMenuSeparator />
        {options.map((option) => (
          <DropdownMenuCheckboxItem
            key={option.value}
            checked={chosen.includes(option.value)}
            onSelect={(event) => { event.preventDefault() }}
            onCheckedChange={(checked) => {
              onChange(checked ? [...chosen, option.value] : chosen.filter((value) => value !== option.value))
            }}
          >
            <span className="min-w-0 flex-1 truncate">{option.label}</span>
            {option.count === undefined ? null : (
              <span className="text-xs text-muted-foreground tabular-nums">{option.count}</span>
            )}
          </DropdownMenuCheckboxItem>
        ))}
      </DropdownMenuContent>
    </DropdownMenu>
  )
}

export type Scope = { workspaces: string[]; persona: string; tags: string[] }

export const EVERYTHING: Scope = { workspaces: [], persona: '', tags: [] }

/** Which workspaces the question searches (none chosen: every one the asker may see, or the
 *  persona's), as which persona, and only documents carrying which tags (every one chosen). */
export function ScopePickers({
  scope,
  onChange,
  disabled,
}: {
  scope: Scope
  onChange: (scope: Scope) => void
  disabled?: boolean
}) {
  const workspaces = useWorkspaces()
  const policy = usePolicy()
  const tags = useTags()
  const personaId = useId()
  const personas = Object.keys(policy.data?.personas ?? {}).sort()
  return (
    <div className="flex min-w-0 flex-wrap items-center gap-1.5">
      <ChecklistMenu
        icon={<FolderTree aria-hidden="true" />}
        heading="Search in"
        none="All workspaces"
        some={(chosen) => (chosen.length === 1 ? (chosen[0] ?? '') : `${chosen.length} workspaces`)}
        options={(workspaces.data?.items ?? []).map((workspace) => ({
          value: workspace.slug,
          label: workspace.title || workspace.slug,
        }))}
        chosen={scope.workspaces}
        onChange={(chosen) => { onChange({ ...scope, workspaces: chosen }) }}
        disabled={disabled}
      />
      {tags.data?.items.length ? (
        <ChecklistMenu
          icon={<Tags aria-hidden="true" />}
          heading="Only documents tagged"
          none="Any tag"
          some={(chosen) => (chosen.length === 1 ? `Tag: ${chosen[0] ?? ''}` : `${chosen.length} tags`)}
          options={tags.data.items.map((item) => ({ value: item.tag, label: item.tag, count: item.documents }))}
          chosen={scope.tags}
          onChange={(chosen) => { onChange({ ...scope, tags: chosen }) }}
          disabled={disabled}
        />
      ) : null}
      {personas.length ? (
        <label htmlFor={personaId} className="relative flex items-center">
          <span className="sr-only">Persona</span>
          <UserRoundCog className="pointer-events-none absolute left-2.5 size-3.5 text-muted-foreground" aria-hidden="true" />
          <NativeSelect
            id={personaId}
            value={scope.persona}
            disabled={disabled}
            onChange={(event) => { onChange({ ...scope, persona: event.target.value }) }}
            className="h-7 max-w-44 rounded-full pl-7 text-xs"
          >
            <option value="">{policy.data?.default_persona ? `Persona: default (${policy.data.default_persona})` : 'No persona'}</option>
            {personas.map((slug) => (
              <option key={slug} value={slug}>Persona: {slug}</option>
            ))}
          </NativeSelect>
        </label>
      ) : null}
    </div>
  )
}
