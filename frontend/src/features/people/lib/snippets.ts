/**
 * Ready-to-paste MCP client configurations (docs/mcp-client-setup.md), filled with this
 * server's MCP URL and, where there is one, the key just minted. Without a key, each client's
 * OAuth form (the person approves it in the browser).
 */
export type Client = 'claude-code' | 'cursor' | 'vscode' | 'codex' | 'oauth'

export const CLIENTS: { id: Client; label: string; where: string }[] = [
  { id: 'claude-code', label: 'Claude Code', where: 'Run in a terminal' },
  { id: 'cursor', label: 'Cursor', where: '~/.cursor/mcp.json (or .cursor/mcp.json in a project)' },
  { id: 'vscode', label: 'VS Code', where: '.vscode/mcp.json' },
  { id: 'codex', label: 'Codex', where: '~/.codex/config.toml' },
  { id: 'oauth', label: 'Any OAuth client', where: 'The URL is all the client needs' },
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
