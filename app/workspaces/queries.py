"""SQL of workspaces. Their names are not secret: every caller may list them, and a count of
documents counts `org` documents only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import RowMapping

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import api_keys, documents, workspaces
from app.workspaces.schemas import Workspace, WorkspaceCreate, WorkspaceTarget, WorkspaceUpdate


def _workspace_columns() -> list[Any]:
    count = (
        select(func.count())
        .select_from(documents)
        .where(documents.c.workspace_id == workspaces.c.id, documents.c.visibility == "org")
        .scalar_subquery()
    )
    return [*workspaces.c, count.label("document_count")]


def _workspace(row: RowMapping) -> Workspace:
    return Workspace.model_validate(dict(row))


async def list_workspaces(conn: ReadConnection, *, scope: str | None) -> list[Workspace]:
    """Every workspace, or only `scope` (a bound key's)."""
    statement = select(*_workspace_columns()).order_by(workspaces.c.slug)
    if scope is not None:
        statement = statement.where(workspaces.c.slug == scope)
    rows = await conn.execute(statement)
    return [_workspace(row) for row in rows.mappings()]


async def get_workspace(conn: ReadConnection, slug: str) -> Workspace | None:
    row = (
        (await conn.execute(select(*_workspace_columns()).where(workspaces.c.slug == slug)))
        .mappings()
        .first()
    )
    return _workspace(row) if row else None


async def workspace_ids(conn: ReadConnection, slugs: Sequence[str]) -> dict[str, UUID]:
    rows = await conn.execute(
        select(workspaces.c.slug, workspaces.c.id).where(workspaces.c.slug.in_(list(slugs)))
    )
    return {row.slug: row.id for row in rows}


async def insert_workspace(
    conn: WriteConnection, data: WorkspaceCreate, *, remote_token_encrypted: bytes | None
) -> bool:
    """Insert a workspace; False when the slug is taken (nothing written)."""
    result = await conn.execute(
        pg_insert(workspaces)
        .values(
            **data.model_dump(exclude={"remote_token"}),
            remote_token_encrypted=remote_token_encrypted,
        )
        .on_conflict_do_nothing(index_elements=["slug"])
        .returning(workspaces.c.id)
    )
    return result.first() is not None


async def ensure_workspace(conn: WriteConnection, slug: str, title: str) -> UUID:
    """The workspace's id, creating it (license from policy) when missing."""
    await conn.execute(
        pg_insert(workspaces)
        .values(slug=slug, title=title)
        .on_conflict_do_nothing(index_elements=["slug"])
    )
    statement = select(workspaces.c.id).where(workspaces.c.slug == slug)
    workspace_id: UUID = (await conn.execute(statement)).scalar_one()
    return workspace_id


async def update_workspace(
    conn: WriteConnection, slug: str, data: WorkspaceUpdate, *, remote_token_encrypted: bytes | None
) -> bool:
    """Write the fields the caller set (an explicit `license: null` means "from policy"; a
    `remote_token` is written sealed, and `remote_url: null` forgets it); False when there is
    no such workspace."""
    values = data.model_dump(exclude_unset=True, exclude={"remote_token"})
    if "remote_token" in data.model_fields_set or values.get("remote_url", "") is None:
        values["remote_token_encrypted"] = remote_token_encrypted
    result = await conn.execute(
        update(workspaces)
        .where(workspaces.c.slug == slug)
        .values(**values, updated_at=func.now())
        .returning(workspaces.c.id)
    )
    return result.first() is not None


async def workspace_holdings(conn: ReadConnection, slug: str) -> tuple[int, int] | None:
    """How many documents (of any visibility) and unrevoked keys the workspace holds; None
    when there is no such workspace."""
    documents_count = (
        select(func.count())
        .select_from(documents)
        .where(documents.c.workspace_id == workspaces.c.id)
        .scalar_subquery()
    )
    keys_count = (
        select(func.count())
        .select_from(api_keys)
        .where(api_keys.c.workspace_id == workspaces.c.id, api_keys.c.revoked_at.is_(None))
        .scalar_subquery()
    )
    row = (
        await conn.execute(select(documents_count, keys_count).where(workspaces.c.slug == slug))
    ).first()
    return (int(row[0]), int(row[1])) if row else None


async def delete_workspace(conn: WriteConnection, slug: str) -> bool:
    """Delete an empty workspace (a document's RESTRICT keeps a full one); its revoked keys go
    with it. False when there is no such workspace or it still holds documents."""
    has_documents = exists().where(documents.c.workspace_id == workspaces.c.id)
    result = await conn.execute(
        delete(workspaces)
        .where(workspaces.c.slug == slug, ~has_documents)
        .returning(workspaces.c.id)
    )
    return result.first() is not None


async def workspace_targets(conn: ReadConnection, *, scope: str | None) -> list[WorkspaceTarget]:
    """Every workspace (or only `scope`) with where it lives, by slug."""
    statement = select(
        workspaces.c.id,
        workspaces.c.slug,
        workspaces.c.license,
        workspaces.c.remote_url,
        workspaces.c.remote_token_encrypted,
    ).order_by(workspaces.c.slug)
    if scope is not None:
        statement = statement.where(workspaces.c.slug == scope)
    rows = await conn.execute(statement)
    return [
        WorkspaceTarget(
            id=row.id,
            slug=row.slug,
            license=row.license,
            remote_url=row.remote_url,
            remote_token_encrypted=row.remote_token_encrypted,
        )
        for row in rows
    ]
