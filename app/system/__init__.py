"""The system domain: readiness and the embedding model the stored vectors were made with."""
