"""SQL of the audit log: the only module that writes it."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import select, tuple_

from app.audit.schemas import AuditEntry, AuditFilters
from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import audit_log


async def insert_audit(
    conn: WriteConnection,
    *,
    actor_id: UUID | None,
    actor_email: str | None,
    action: str,
    target_type: str,
    target_id: str | None,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    agent_key_id: UUID | None = None,
    agent_client_id: str | None = None,
) -> None:
    """`before` and `after` are JSON documents of the changed fields, never secrets."""
    await conn.execute(
        audit_log.insert().values(
            actor_id=actor_id,
            actor_email=actor_email,
            action=action,
            target_type=target_type,
            target_id=target_id,
            before=before,
            after=after,
            agent_key_id=agent_key_id,
            agent_client_id=agent_client_id,
        )
    )


async def list_audit(
    conn: ReadConnection,
    filters: AuditFilters,
    *,
    limit: int,
    before: tuple[datetime, UUID] | None,
) -> list[AuditEntry]:
    """A page of the log, newest first."""
    statement = select(audit_log)
    if filters.actor is not None:
        try:
            statement = statement.where(audit_log.c.actor_id == UUID(filters.actor))
        except ValueError:
            statement = statement.where(audit_log.c.actor_email == filters.actor.lower())
    if filters.action is not None:
        statement = statement.where(audit_log.c.action == filters.action)
    if filters.target is not None:
        statement = statement.where(audit_log.c.target_id == filters.target)
    if filters.since is not None:
        statement = statement.where(audit_log.c.at >= filters.since)
    if filters.until is not None:
        statement = statement.where(audit_log.c.at < filters.until)
    if before is not None:
        statement = statement.where(tuple_(audit_log.c.at, audit_log.c.id) < tuple_(*before))
    statement = statement.order_by(audit_log.c.at.desc(), audit_log.c.id.desc()).limit(limit)
    rows = (await conn.execute(statement)).mappings()
    return [AuditEntry.model_validate(dict(row)) for row in rows]
