"""Writing documents into the retrieval index: chunks with embeddings, lexemes and postings,
and the BM25 statistics. The documents service calls this inside its transaction."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from uuid import UUID

import numpy as np

from app.db.engine import WriteConnection
from app.observe import metrics
from app.rag import queries
from app.rag.chunking import ChunkPiece, TokenCounter, chunk_markdown
from app.rag.embeddings.base import Embedder

# A chunk of about 200 tokens as the embedding model counts them (~150 words), and never more
# than its window with the chunk's title and heading path (all-MiniLM-L6-v2 reads 256 word
# pieces): ADR 0013.
TARGET_TOKENS = 200
OVERLAP_TOKENS = 30
MAX_TOKENS = 400
# A title and heading path longer than this share of the window are cut: the chunk's own text
# keeps at least the rest.
CONTEXT_SHARE = 2


def embedding_text(title: str, heading_path: Sequence[str], text: str, embedder: Embedder) -> str:
    """What the model reads for a chunk: where it sits (as a reader of the document would see
    it, cut to half the model's window), then its text."""
    return context(title, heading_path, embedder) + text


def context(title: str, heading_path: Sequence[str], embedder: Embedder) -> str:
    """The start of every embedding text of a section: its title and heading path."""
    joined = " > ".join([title, *heading_path])
    if embedder.window is None:
        return f"{joined}\n\n"
    return f"{_fitted(joined, embedder.window // CONTEXT_SHARE, embedder.count_tokens)}\n\n"


@lru_cache(maxsize=4096)
def _fitted(text: str, budget: int, counter: TokenCounter) -> str:
    """`text`, or as much of its start as fits `budget` tokens with an ellipsis. Cached: every
    chunk of a section has the same context, and most documents have a few sections."""
    if counter([text])[0] <= budget:
        return text
    # Cut by halves, each cut measured: a character is anything from a quarter of a token to
    # three (a Hangul syllable is three letters to a BERT tokenizer).
    fits, over = 0, len(text)
    while over - fits > 1:
        middle = (fits + over) // 2
        if counter([text[:middle] + "…"])[0] <= budget:
            fits = middle
        else:
            over = middle
    return text[:fits].rstrip() + "…"


def chunk(content: str, *, title: str, embedder: Embedder) -> list[ChunkPiece]:
    """The document's chunks, measured as `embedder`'s model counts: each one's embedding text
    fits the model's window."""
    return chunk_markdown(
        content,
        target_tokens=TARGET_TOKENS,
        overlap_tokens=OVERLAP_TOKENS,
        max_tokens=MAX_TOKENS,
        counter=embedder.count_tokens,
        window=embedder.window,
        context=lambda heading_path: context(title, heading_path, embedder),
        span_counter=embedder.span_counts(content),
    )


@dataclass(frozen=True, slots=True)
class DocumentChunks:
    """A document's chunks and their vectors, to write; `counted` (an `org` document's): with
    their share of the BM25 statistics; `page_starts`, a PDF's (where each page starts in the
    content): each chunk then has its page."""

    document_id: UUID
    workspace_id: UUID
    private_owner_id: UUID | None
    title: str
    pieces: Sequence[ChunkPiece]
    vectors: np.ndarray
    counted: bool
    page_starts: Sequence[int] | None = None


async def insert_chunks(conn: WriteConnection, documents: Sequence[DocumentChunks]) -> None:
    """Write documents' chunks, all in one statement (`queries.WRITE_CHUNKS`)."""
    written = [
        queries.DocumentChunks(
            document_id=document.document_id,
            workspace_id=document.workspace_id,
            private_owner_id=document.private_owner_id,
            title=document.title,
            rows=[
                queries.ChunkRow(
                    ordinal=piece.ordinal,
                    heading_path=piece.heading_path,
                    text=piece.text,
                    start=piece.start,
                    end=piece.end,
                    token_count=piece.token_count,
                    embedding=vector,
                    page=None
                    if document.page_starts is None
                    else page_of(piece.start, piece.end, document.page_starts),
                )
                for piece, vector in zip(document.pieces, document.vectors, strict=True)
            ],
            counted=document.counted,
        )
        for document in documents
    ]
    await queries.insert_chunks(conn, written)
    metrics.indexed(sum(len(document.rows) for document in written))


def page_of(start: int, end: int, page_starts: Sequence[int]) -> int | None:
    """The page (from 1) that holds most of [start, end), the earliest on a tie: a chunk's
    overlap with the one before it may reach back onto the previous page."""
    if not page_starts:
        return None
    first = max(bisect_right(page_starts, start) - 1, 0)
    best, most = first + 1, -1
    for index in range(first, len(page_starts)):
        page_start = page_starts[index]
        if page_start >= end and index > first:
            break
        page_end = page_starts[index + 1] if index + 1 < len(page_starts) else end
        covered = min(end, page_end) - max(start, page_start)
        if covered > most:
            best, most = index + 1, covered
    return best


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
