"""The documents domain: workspaces, documents, their conversion to Markdown and their chunks."""
