"""Retrieval-augmented generation: chunking, embeddings, retrieval and the agents built on them."""
