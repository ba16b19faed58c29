"""The documents service chunks with the configured embedder's window and token count, and keeps
the project's estimate as each chunk's stored token count (the LLM context budget's unit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection
from tokenizers import Tokenizer

from app.db.tables import chunks as chunks_table
from app.rag import index
from app.rag.chunking import count_tokens
from app.rag.embeddings import local
from app.rag.embeddings.hash import HashEmbedder
from app.resources import Resources
from tests.accounts import authorize


class LocallyCountedHashEmbedder(HashEmbedder):
    """Hash vectors (the test database's dimension, no model to load) with the local model's
    window and tokenizer: the chunks must follow whatever the configured embedder declares."""

    def __init__(self) -> None:
        super().__init__()
        self.window = local.WINDOW

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return local.count_tokens(texts)


async def test_a_document_s_chunks_fit_the_configured_embedder_s_window(
    app: FastAPI, client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "admin")
    title = "Release history"
    # Version numbers: about a word piece per character, four times the project's estimate.
    content = "# Releases\n\n" + " ".join(f"v{i}.{i % 7}.{i % 3} 0x{i:04x}" for i in range(300))
    embedder = LocallyCountedHashEmbedder()
    resources: Resources = app.state.resources
    app.state.resources = replace(resources, embedder=embedder)
    try:
        created = await client.post("/api/documents", json={"title": title, "content": content})
        assert created.status_code == 201
        chunks = (await client.get(f"/api/documents/{created.json()['id']}/chunks")).json()
    finally:
        app.state.resources = resources

    tokenizer = Tokenizer.from_file(str(local.MODEL_DIR / "tokenizer.json"))
    tokenizer.no_truncation()
    assert len(chunks) > 4
    for chunk in chunks:
        text = index.embedding_text(title, chunk["heading_path"], chunk["text"], embedder)
        assert len(tokenizer.encode(text).ids) <= 256
    stored = await conn.execute(
        select(chunks_table.c.text, chunks_table.c.token_count).where(
            chunks_table.c.document_id == created.json()["id"]
        )
    )
    rows = stored.all()
    assert len(rows) == len(chunks)
    assert all(token_count == count_tokens(text) for text, token_count in rows)
