"""Searching and asking as the doors offer them: above the workspaces service (which resolves
the workspaces a caller's search covers) and the ranking in `app.rag` (which ranks, applies
what a caller may see, and records nothing)."""
