"""SQL of the system domain."""

from __future__ import annotations

from sqlalchemy import select, text

from app.db.engine import ReadConnection
from app.db.tables import embedding_meta
from app.system.schemas import EmbeddingModel


async def ping(conn: ReadConnection) -> None:
    await conn.execute(text("SELECT 1"))


async def database_revision(conn: ReadConnection) -> str | None:
    """The Alembic revision the database is at (None before the first migration)."""
    if (await conn.execute(text("SELECT to_regclass('alembic_version')"))).scalar() is None:
        return None
    return (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()


async def stored_embedding_model(conn: ReadConnection) -> EmbeddingModel | None:
    row = (
        await conn.execute(
            select(embedding_meta.c.provider, embedding_meta.c.model, embedding_meta.c.dim)
        )
    ).first()
    return EmbeddingModel(provider=row.provider, model=row.model, dim=row.dim) if row else None
