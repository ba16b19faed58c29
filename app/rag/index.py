"""Writing documents into the retrieval index: chunks with embeddings, lexemes and postings,
and the BM25 statistics. The documents service calls this inside its transaction."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import numpy as np

from app.db.engine import WriteConnection
from app.rag import queries
from app.rag.chunking import ChunkPiece, chunk_markdown

# A chunk of about 200 tokens (~150 words) stays inside a small embedding model's window
# (all-MiniLM-L6-v2 reads 256 word pieces) together with its title and heading path.
TARGET_TOKENS = 200
OVERLAP_TOKENS = 30
MAX_TOKENS = 400


def embedding_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """What the model reads for a chunk: where it sits (as a reader of the document would see
    it), then its text."""
    context = " > ".join([title, *heading_path])
    return f"{context}\n\n{text}"


def chunk(content: str) -> list[ChunkPiece]:
    return chunk_markdown(
        content, target_tokens=TARGET_TOKENS, overlap_tokens=OVERLAP_TOKENS, max_tokens=MAX_TOKENS
    )


async def insert_chunks(
    conn: WriteConnection,
    *,
    document_id: UUID,
    workspace_id: UUID,
    private_owner_id: UUID | None,
    title: str,
    pieces: Sequence[ChunkPiece],
    vectors: np.ndarray,
) -> None:
    rows = [
        queries.ChunkRow(
            ordinal=piece.ordinal,
            heading_path=piece.heading_path,
            text=piece.text,
            start=piece.start,
            end=piece.end,
            token_count=piece.token_count,
            embedding=vector,
        )
        for piece, vector in zip(pieces, vectors, strict=True)
    ]
    await queries.insert_chunks(
        conn,
        document_id=document_id,
        workspace_id=workspace_id,
        private_owner_id=private_owner_id,
        title=title,
        rows=rows,
    )


async def count_in_statistics(conn: WriteConnection, document_id: UUID, sign: int = 1) -> None:
    """Add an `org` document to the BM25 statistics (sign -1 takes it out)."""
    await queries.adjust_statistics(conn, document_id, sign)


async def delete_chunks(conn: WriteConnection, document_id: UUID) -> None:
    await queries.delete_chunks(conn, document_id)


async def rewrite_lexemes(conn: WriteConnection, document_id: UUID, title: str) -> None:
    await queries.rewrite_lexemes(conn, document_id, title)


async def set_private_owner(
    conn: WriteConnection, document_id: UUID, private_owner_id: UUID | None
) -> None:
    await queries.set_private_owner(conn, document_id, private_owner_id)
