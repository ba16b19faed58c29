"""Migrations: up and down cleanly, no drift from the table definitions or from sql/schema.sql."""

from __future__ import annotations

import asyncio
import io
import uuid
from contextlib import redirect_stdout
from pathlib import Path

from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import Settings
from app.db import migrate
from tests.db.schema_sql import SCHEMA_FILE, dump_schema, migrated_schema
from tests.support import create_database, make_settings


async def _tables(url: str) -> set[str]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        )
        names = {row.tablename for row in rows}
    await engine.dispose()
    return names


def test_migrations_go_down_to_nothing_and_up_again(server_url: str, data_dir: Path) -> None:
    url = create_database(server_url, f"corpus_updown_{uuid.uuid4().hex[:8]}")
    settings = make_settings(data_dir, database_url=url)
    migrate.upgrade(settings, url)
    migrated = dump_schema(url)
    assert "chunks" in asyncio.run(_tables(url))

    migrate.downgrade(settings, url, "base")
    assert asyncio.run(_tables(url)) == {"alembic_version"}

    migrate.upgrade(settings, url)
    assert dump_schema(url) == migrated


def test_table_definitions_match_the_migrations(settings: Settings) -> None:
    # `alembic check` raises when autogenerate would write a migration.
    with redirect_stdout(io.StringIO()):
        command.check(migrate.alembic_config(settings, settings.database_url))


def test_schema_sql_is_what_the_migrations_leave(server_url: str, data_dir: Path) -> None:
    assert migrated_schema(server_url, data_dir) == SCHEMA_FILE.read_text(), (
        "sql/schema.sql is stale: run `make schema` and commit it"
    )


def test_the_vector_dimension_comes_from_settings(server_url: str, data_dir: Path) -> None:
    url = create_database(server_url, f"corpus_dim_{uuid.uuid4().hex[:8]}")
    migrate.upgrade(make_settings(data_dir, database_url=url, embeddings_provider="openai"), url)
    assert "embedding public.vector(1536) NOT NULL" in dump_schema(url)


async def _vector_index(url: str) -> tuple[int, list[str]]:
    """The HNSW index's object id (a rebuild changes it) and its options."""
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT oid::bigint, reloptions FROM pg_class "
                    "WHERE relname = 'ix_chunks_embedding_hnsw'"
                )
            )
        ).one()
    await engine.dispose()
    return int(row[0]), sorted(row[1])


def test_the_denser_graph_is_built_once(server_url: str, data_dir: Path) -> None:
    url = create_database(server_url, f"corpus_graph_{uuid.uuid4().hex[:8]}")
    settings = make_settings(data_dir, database_url=url)
    migrate.upgrade(settings, url, "0009")
    before, options = asyncio.run(_vector_index(url))
    assert options == ["ef_construction=64", "m=16"]

    migrate.upgrade(settings, url, "0010")
    rebuilt, options = asyncio.run(_vector_index(url))
    assert options == ["ef_construction=200", "m=16"]
    assert rebuilt != before

    # Already as wanted (an operator rebuilt it ahead of the upgrade): left as it is.
    migrate.downgrade(settings, url, "0009")
    assert asyncio.run(_vector_index(url))[1] == ["ef_construction=64", "m=16"]

    async def rebuild_by_hand() -> None:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("DROP INDEX ix_chunks_embedding_hnsw"))
            await conn.execute(
                text(
                    "CREATE INDEX ix_chunks_embedding_hnsw ON chunks USING hnsw "
                    "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200)"
                )
            )
        await engine.dispose()

    asyncio.run(rebuild_by_hand())
    by_hand, _ = asyncio.run(_vector_index(url))
    migrate.upgrade(settings, url, "0010")
    assert asyncio.run(_vector_index(url))[0] == by_hand
