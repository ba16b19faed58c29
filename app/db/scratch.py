"""Throwaway databases on the same server, for `corpus eval`, `corpus bench` and tests."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine


def database_url(server_url: str, name: str) -> str:
    """`server_url` with another database name (the query, e.g. a socket folder, is kept)."""
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


async def create_database(server_url: str, name: str, *, template: str | None = None) -> str:
    """Create a database next to `server_url`'s, empty or a copy of `template` (which nobody
    may be connected to); return its URL."""
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    copy = f' TEMPLATE "{template}"' if template else ""
    try:
        async with engine.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    finally:
        await engine.dispose()
    return database_url(server_url, name)


async def drop_database(server_url: str, name: str) -> None:
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await engine.dispose()


async def database_comment(server_url: str, name: str) -> str | None:
    """The comment on database `name`, "" when it has none, None when it does not exist."""
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            row = (
                await conn.execute(
                    text(
                        "SELECT coalesce(shobj_description(oid, 'pg_database'), '') "
                        "FROM pg_database WHERE datname = :name"
                    ),
                    {"name": name},
                )
            ).first()
    finally:
        await engine.dispose()
    return None if row is None else str(row[0])


async def comment_on_database(server_url: str, name: str, comment: str) -> None:
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            quoted = comment.replace("'", "''")
            await conn.execute(text(f"COMMENT ON DATABASE \"{name}\" IS '{quoted}'"))
    finally:
        await engine.dispose()


async def prewarming(server_url: str) -> bool:
    """Whether the server is still loading the pages it had buffered at its last stop
    (autoprewarm, ADR 0016): a per-database worker loads each database's and exits. The first
    appears up to a second after the start, so a server started moments ago counts as loading."""
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            busy = await conn.scalar(
                text(
                    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity "
                    "               WHERE backend_type = 'autoprewarm worker') "
                    "OR (current_setting('shared_preload_libraries') LIKE '%pg_prewarm%' "
                    "    AND pg_postmaster_start_time() > now() - interval '5 seconds')"
                )
            )
    finally:
        await engine.dispose()
    return bool(busy)
