"""The agents' door: the MCP server at /mcp and the OAuth routes the MCP SDK serves."""
