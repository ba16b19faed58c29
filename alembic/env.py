"""Alembic's async environment. The URL and settings come from app/db/migrate.py through
`config.attributes`; run bare (`alembic upgrade head`), it resolves them the way `corpus` does."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from pgvector.sqlalchemy import Vector
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import Settings, get_settings
from app.db import embedded
from app.db.tables import metadata

config = context.config
settings: Settings = config.attributes.get("settings") or get_settings()
config.attributes["settings"] = settings
url: str = config.attributes.get("url") or embedded.resolve_url(settings)

# A migration waits at most this long for a lock, then fails rather than queueing every request
# behind it (deploy-safe migrations, STYLE.md).
LOCK_TIMEOUT = "5s"
# Processes that migrate at once (two servers started together on a fresh data folder) take
# turns: the second waits for the first to commit, then finds nothing left to do. Any constant
# works as long as every migrating process uses the same one.
MIGRATION_LOCK_KEY = 0x636F7270  # "corp"


def _compare_type(
    _context: Any, _inspected: Any, metadata_column: Any, inspected_type: Any, metadata_type: Any
) -> bool | None:
    # The embedding dimension belongs to the configured model, not to the metadata (which leaves
    # it open), so two vectors are the same type whatever their dimensions.
    if isinstance(metadata_type, Vector) and isinstance(inspected_type, Vector):
        return False
    return None


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=_compare_type,
        compare_server_default=False,
    )
    with context.begin_transaction():
        # Taken before the lock timeout is set: waiting for another migrating process is
        # expected, and it is released when this transaction ends.
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run them against a database")
asyncio.run(_run_async())
