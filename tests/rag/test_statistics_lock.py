"""Writers of the BM25 statistics wait for each other before they lock any lexeme, so a
transaction of two statistics statements (an edit: the old chunks out, the new in) does not
deadlock with another writer. Each statement updates the corpus's row in its main query and
upserts the lexemes in a WITH clause the main query does not read, which PostgreSQL runs after
it: the row first, then the lexemes. A statement that read its upsert's output, or an upsert of
its own before the row, would lock a writer's lexemes before it waited for the row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from uuid import UUID

from sqlalchemy import text

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.rag import queries as rag_queries
from app.rag.embeddings.hash import HashEmbedder
from tests.support import eventually, make_settings, migrated_database, waiting_on_locks


async def _frequencies(db: Database, document_id: UUID) -> set[int]:
    """The document frequencies of the lexemes of a document's chunks."""
    async with db.read() as conn:
        rows = await conn.execute(
            text(
                "SELECT DISTINCT s.df FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS t "
                "JOIN lexeme_stats s ON s.lexeme = t.lexeme WHERE c.document_id = :d"
            ),
            {"d": document_id},
        )
        return {row.df for row in rows}


async def test_a_writer_holding_the_statistics_and_one_waiting_for_them_do_not_deadlock(
    settings: Settings, server_url: str, data_dir: Path
) -> None:
    url = await migrated_database(server_url, data_dir, "corpus_statistics_lock")
    db, embedder = Database(url), HashEmbedder()
    write_settings = make_settings(settings.data_dir, database_url=url)
    try:
        async with db.write() as conn:
            heron, spoonbill = [
                await documents_service.create(
                    conn, LOCAL_ADMIN, embedder, write_settings, DocumentCreate(title=t, content=c)
                )
                for t, c in (
                    ("Heron", "Herons nest by the estuary."),
                    ("Spoonbill", "Spoonbills sweep the shallows."),
                )
            ]

        async def add_spoonbill_again() -> None:
            async with db.write() as conn:
                await rag_queries.adjust_statistics(conn, spoonbill.id, 1)

        async def another_waits() -> bool:
            async with db.read() as conn:
                return await waiting_on_locks(conn) >= 1

        # The first writer takes the heron out of the statistics and holds them; the second
        # starts to add the spoonbill again and waits for it; the first then takes the
        # spoonbill out too. Had the second locked the spoonbill's lexemes before it waited for
        # the corpus's row, the first would now wait for it in turn: a deadlock, and PostgreSQL
        # aborts one of them.
        async with db.write() as first:
            await rag_queries.adjust_statistics(first, heron.id, -1)
            second = asyncio.create_task(add_spoonbill_again())
            await eventually(another_waits, "the second writer waits for the first")
            await rag_queries.adjust_statistics(first, spoonbill.id, -1)
        await second

        async with db.read() as reader:
            counts = (
                await reader.execute(text("SELECT chunk_count FROM corpus_stats"))
            ).scalar_one()
            spoonbill_chunks = (
                await reader.execute(
                    text("SELECT count(*) FROM chunks WHERE document_id = :d"),
                    {"d": spoonbill.id},
                )
            ).scalar_one()
        # Both committed, one after the other: the heron out, the spoonbill out and in again.
        assert counts == spoonbill_chunks
        assert await _frequencies(db, heron.id) == {0}
        assert await _frequencies(db, spoonbill.id) == {1}
    finally:
        await db.dispose()
