"""Asking's records: chats with their messages, citations and traces, and the deep research
jobs that outlive an MCP call."""
