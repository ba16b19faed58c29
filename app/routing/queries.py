"""SQL of the admins' policy layer: the `personas` table (the built-in table and the policy
file are not stored)."""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import personas


async def admin_personas(conn: ReadConnection) -> dict[str, tuple[str, ...]]:
    rows = await conn.execute(select(personas.c.slug, personas.c.workspaces))
    return {row.slug: tuple(row.workspaces) for row in rows}


async def set_persona(
    conn: WriteConnection, *, slug: str, workspaces: list[str], updated_by: UUID | None
) -> None:
    statement = pg_insert(personas).values(slug=slug, workspaces=workspaces, updated_by=updated_by)
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=["slug"],
            set_={"workspaces": workspaces, "updated_by": updated_by, "updated_at": func.now()},
        )
    )


async def delete_persona(conn: WriteConnection, slug: str) -> bool:
    result = await conn.execute(
        delete(personas).where(personas.c.slug == slug).returning(personas.c.slug)
    )
    return result.first() is not None
