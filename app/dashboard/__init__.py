"""The dashboard: what the corpus holds, how it is used, and what it is missing."""
