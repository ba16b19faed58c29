import { KeyRound } from 'lucide-react'
import { useState } from 'react'

import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { CopyBlock } from '@/components/ui/copy-button'
import { PageHeader } from '@/components/ui/page-header'
import { ClientSnippets } from '@/features/people/components/client-snippets'
import { MintKeyDialog } from '@/features/people/components/mint-key-dialog'
import { mcpUrl } from '@/features/people/lib/snippets'
import { usePageTitle } from '@/lib/page-title'

import { AdminOnly } from './admin-only'

export function ConnectRoute() {
  usePageTitle('Connect an agent')
  const [minting, setMinting] = useState(false)
  const [key, setKey] = useState<string>()
  return (
    <AdminOnly action="keys.manage">
      {() => (
        <div className="mx-auto grid max-w-6xl gap-6 *:max-w-3xl">
          <PageHeader
            title="Connect an agent"
            description="Claude Code, Cursor, VS Code, Codex or any MCP client reaches this Corpus at its MCP URL, with an API key or by OAuth."
            actions={
              <Button onClick={() => { setMinting(true) }}>
                <KeyRound aria-hidden="true" />
                Mint a key
              </Button>
            }
          />
          <Card>
            <CardHeader>
              <CardTitle>MCP URL</CardTitle>
              <CardDescription>Clients must use this host name.</CardDescription>
            </CardHeader>
            <CardContent>
              <CopyBlock text={mcpUrl()} name="MCP URL" label="Copy URL" />
            </CardContent>
          </Card>
          <Card>
            <CardHeader>
              <CardTitle>Client configuration</CardTitle>
              <CardDescription>
                {key
                  ? 'Filled with the key you just minted: it is not shown again once you leave this page.'
                  : 'Without a key, each client signs in by OAuth: a person approves it in the browser. Mint a key to fill these with it.'}
              </CardDescription>
            </CardHeader>
            <CardContent>
              <ClientSnippets apiKey={key} />
            </CardContent>
          </Card>
          <MintKeyDialog open={minting} onOpenChange={setMinting} onMinted={(minted) => { setKey(minted.key) }} />
        </div>
      )}
    </AdminOnly>
  )
}
