"""Searching and asking as the doors offer them: above the documents service (which resolves
what a caller may see) and the ranking in `app.rag` (which ranks and records nothing)."""
