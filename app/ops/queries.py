"""SQL of the operations commands: what a backup records about its snapshot, and whether a
restore's target is empty and unused."""

from __future__ import annotations

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, embedding_meta, workspaces


async def export_snapshot(conn: AsyncConnection) -> str:
    """The id of this (repeatable-read) transaction's snapshot, for `pg_dump --snapshot`: the
    dump and the manifest then describe the same instant."""
    snapshot: str = (await conn.execute(text("SELECT pg_export_snapshot()"))).scalar_one()
    return snapshot


async def revision(conn: AsyncConnection) -> str | None:
    if (await conn.execute(text("SELECT to_regclass('public.alembic_version')"))).scalar() is None:
        return None
    return (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()


async def embedding_model(conn: AsyncConnection) -> tuple[str, str, int] | None:
    row = (
        await conn.execute(
            select(embedding_meta.c.provider, embedding_meta.c.model, embedding_meta.c.dim)
        )
    ).first()
    return (row.provider, row.model, row.dim) if row else None


async def counts(conn: AsyncConnection) -> dict[str, int]:
    """How many workspaces, documents and chunks the database holds."""
    row = (
        await conn.execute(
            select(
                select(func.count()).select_from(workspaces).scalar_subquery(),
                select(func.count()).select_from(documents).scalar_subquery(),
                select(func.count()).select_from(chunks).scalar_subquery(),
            )
        )
    ).one()
    return {"workspaces": row[0], "documents": row[1], "chunks": row[2]}


async def table_count(conn: AsyncConnection) -> int:
    """How many tables the public schema holds (0: a database nothing was put in yet)."""
    count: int = (
        await conn.execute(
            text("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'")
        )
    ).scalar_one()
    return count


async def other_sessions(conn: AsyncConnection) -> int:
    """How many other clients are connected to this database (a running server's pool)."""
    count: int = (
        await conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
        )
    ).scalar_one()
    return count
