"""`corpus reembed`: after the embedding model changes, every chunk gets a new vector of the new
dimension, the model is recorded, and the server starts and searches again."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from sqlalchemy import text

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.rag.embeddings import make_embedder
from app.search import service as search_service
from app.search.schemas import SearchRequest
from app.system import service as system_service
from app.system.service import EmbeddingModelMismatch
from tests.support import PROJECT_ROOT, child_env, make_settings, migrated_database


async def test_reembed_moves_every_chunk_to_the_new_model(
    server_url: str, settings: Settings
) -> None:
    url = await migrated_database(server_url, settings.data_dir, "corpus_reembed")
    before = make_settings(settings.data_dir, database_url=url)
    db = Database(url)
    embedder = make_embedder(before)
    for title, content in [("Rollback", "Rollback with make rollback."), ("Cache", "Warm it.")]:
        async with db.write() as conn:
            await documents_service.create(
                conn, LOCAL_ADMIN, embedder, before, DocumentCreate(title=title, content=content)
            )
    after = make_settings(settings.data_dir, database_url=url, embeddings_dim=256)
    with pytest.raises(EmbeddingModelMismatch):
        await system_service.ensure_embedding_model(db, after)

    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "app.cli", "reembed"],
        cwd=PROJECT_ROOT,
        env=child_env(DATABASE_URL=url, EMBEDDINGS_PROVIDER="hash", EMBEDDINGS_DIM="256"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("re-embedded 2 chunks")

    await system_service.ensure_embedding_model(db, after)
    async with db.read() as conn:
        dims = (
            await conn.execute(text("SELECT DISTINCT vector_dims(embedding) FROM chunks"))
        ).all()
        indexes = (
            await conn.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = 'chunks'"))
        ).scalars()
        assert dims == [(256,)]
        assert "ix_chunks_embedding_hnsw" in set(indexes)
        hits = await search_service.rank(
            conn, LOCAL_ADMIN, make_embedder(after), after, SearchRequest(query="rollback")
        )
    assert hits[0].title == "Rollback"
    await db.dispose()
