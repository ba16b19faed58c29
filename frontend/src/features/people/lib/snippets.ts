/**
 * Ready-to-paste MCP client configurations (docs/mcp-client-setup.md), filled with this
 * server's MCP URL and, where there is one, the key just minted. Without a key, each client's
 * OAuth form (the person approves it in the browser).
 */
export type Client = 'claude-code' | 'cursor' | 'vscode' | 'codex' | 'oauth'

/** How a client identifies itself to Corpus: an API key in a header, or OAuth with a Client ID
 *  Metadata Document (its `client_id` an HTTPS URL) or by dynamic registration at /register. */
export type Registration = 'api-key' | 'cimd' | 'dcr'

export const REGISTRATIONS: Record<Registration, string> = {
  'api-key': 'API key',
  cimd: 'OAuth: Client ID Metadata Document',
  dcr: 'OAuth: dynamic registration',
}

// As docs/mcp-client-setup.md ("Which client uses which registration") says: a client that
// supports CIMD uses it because Corpus advertises it, and registers only where it does not.
export const CLIENTS: { id: Client; label: string; where: string; registrations: Registration[] }[] = [
  { id: 'claude-code', label: 'Claude Code', where: 'Run in a terminal', registrations: ['api-key', 'cimd'] },
  {
    id: 'cursor',
    label: 'Cursor',
    where: '~/.cursor/mcp.json (or .cursor/mcp.json in a project)',
    registrations: ['api-key', 'dcr'],
  },
  { id: 'vscode', label: 'VS Code', where: '.vscode/mcp.json', registrations: ['api-key', 'cimd'] },
  { id: 'codex', label: 'Codex', where: '~/.codex/config.toml', registrations: ['api-key', 'cimd'] },
  { id: 'oauth', label: 'Any OAuth client', where: 'The URL is all the client needs', registrations: ['cimd', 'dcr'] },
]

/** The MCP endpoint of the server this page came from. */
export function mcpUrl(origin: string = window.location.origin): string {
  return `${origin.replace(/\/$/, '')}/mcp`
}

export function snippet(client: Client, url: string, key?: string): string {
  switch (client) {
    case 'claude-code':
      return key
        ? `claude mcp add --transport http corpus ${url} \\\n  --header "Authorization: Bearer ${key}"`
        : `claude mcp add --transport http corpus ${url}\n# then run /mcp in a session and choose to authenticate`
    case 'cursor':
      return JSON.stringify(
        { mcpServers: { corpus: key ? { url, headers: { Authorization: `Bearer ${key}` } } : { url } } },
        null,
        2,
      )
    case 'vscode':
      return JSON.stringify(
        key
          ? { servers: { corpus: { type: 'http', url, headers: { Authorization: `Bearer ${key}` } } } }
          : { servers: { corpus: { type: 'http', url } } },
        null,
        2,
      )
    case 'codex':
      // Codex refuses an inline bearer token: a literal header table carries the key.
      return key
        ? `[mcp_servers.corpus]\nurl = "${url}"\n\n[mcp_servers.corpus.http_headers]\nAuthorization = "Bearer ${key}"`
        : `[mcp_servers.corpus]\nurl = "${url}"\n# then: codex mcp login corpus`
    case 'oauth':
      return url
  }
}
