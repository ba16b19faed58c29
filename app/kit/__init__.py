"""The shared mechanics every domain uses the same way (keyset paging, partial updates, the
Markdown a document's title and chunks are read from, identifier types). A leaf: it imports no
domain and no web framework."""
