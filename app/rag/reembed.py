"""`corpus reembed`: make every chunk's vector again with the configured embedding model, after
EMBEDDINGS_PROVIDER, EMBEDDINGS_MODEL or EMBEDDINGS_DIM changed.

The new vectors go into a column of their own, in committed batches (an interrupted run
resumes); one last transaction swaps the columns, rebuilds the HNSW index and records the model
in `embedding_meta`, so start-up accepts the database again."""

from __future__ import annotations

from collections.abc import Callable

from app.db.engine import Database
from app.rag import index, queries
from app.rag.embeddings.base import Embedder

BATCH = 128


async def reembed(db: Database, embedder: Embedder, progress: Callable[[int, int], None]) -> int:
    """Re-embed every chunk; returns how many were embedded by this run."""
    async with db.write() as conn:
        await queries.start_reembedding(conn, embedder.dim)
    async with db.read() as conn:
        remaining, total = await queries.count_to_reembed(conn)
    done = total - remaining
    progress(done, total)
    embedded = 0
    while True:
        async with db.read() as conn:
            batch = await queries.chunks_to_reembed(conn, BATCH)
        if not batch:
            break
        vectors = await embedder.embed_passages(
            [index.embedding_text(title, path, text, embedder) for _, title, path, text in batch]
        )
        async with db.write() as conn:
            await queries.store_reembedded(
                conn,
                [(chunk_id, vector) for (chunk_id, *_), vector in zip(batch, vectors, strict=True)],
            )
        embedded += len(batch)
        progress(done + embedded, total)
    async with db.write() as conn:
        await queries.finish_reembedding(
            conn, provider=embedder.provider, model=embedder.model, dim=embedder.dim
        )
    return embedded
