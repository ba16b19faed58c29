import { useState } from 'react'

import { Badge } from '@/components/ui/badge'
import { CopyBlock } from '@/components/ui/copy-button'
import { cn } from '@/lib/cn'

import { CLIENTS, mcpUrl, REGISTRATIONS, snippet, type Client } from '../lib/snippets'

/** The MCP URL of this server and each common client's configuration, with `apiKey` in it
 *  when there is one (else each client's OAuth form). */
export function ClientSnippets({ apiKey }: { apiKey?: string | undefined }) {
  const [client, setClient] = useState<Client>('claude-code')
  const url = mcpUrl()
  const current = CLIENTS.find((entry) => entry.id === client) ?? {
    id: client,
    label: client,
    where: '',
    registrations: [],
  }
  return (
    <div className="grid gap-3">
      <div role="tablist" aria-label="MCP client" className="flex flex-wrap gap-1">
        {CLIENTS.map((entry) => (
          <button
            key={entry.id}
            type="button"
            role="tab"
            aria-selected={entry.id === client}
            onClick={() => { setClient(entry.id) }}
            className={cn(
              'h-8 rounded-md px-3 text-sm font-medium focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
              entry.id === client ? 'bg-muted text-foreground' : 'text-muted-foreground hover:bg-muted/60',
            )}
          >
            {entry.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={current.label} className="grid gap-2">
        <ul aria-label={`How ${current.label} connects`} className="flex flex-wrap gap-1">
          {current.registrations.map((registration) => (
            <li key={registration}>
              <Badge variant={registration === 'api-key' ? 'secondary' : 'outline'}>{REGISTRATIONS[registration]}</Badge>
            </li>
          ))}
        </ul>
        <p className="text-xs text-muted-foreground">{current.where}</p>
        <CopyBlock
          text={snippet(current.id, url, apiKey)}
          name={`${current.label} configuration`}
          label={`Copy the ${current.label} snippet`}
        />
      </div>
    </div>
  )
}
