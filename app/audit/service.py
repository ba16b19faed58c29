"""The audit log: every change to accounts, keys and the routing policy, recorded in the same
transaction as the change, so a change and its record land together or not at all."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.access.principal import Principal
from app.audit import queries
from app.audit.schemas import AuditEntry, AuditFilters
from app.db.engine import ReadConnection, WriteConnection
from app.kit.paging import decode_cursor, keyset_page
from app.schemas import Page


async def record(
    conn: WriteConnection,
    actor: Principal,
    action: str,
    *,
    target_type: str,
    target_id: UUID | str | None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Write one audit entry, in the caller's transaction: a change and its record land
    together or not at all. Callers pass values, never secrets. The entry names the person and
    the agent they acted through (the API key or OAuth client), if any."""
    await queries.insert_audit(
        conn,
        actor_id=actor.user_id,
        actor_email=actor.email,
        action=action,
        target_type=target_type,
        target_id=str(target_id) if target_id is not None else None,
        before=before,
        after=after,
        agent_key_id=actor.key_id,
        agent_client_id=actor.client_id,
    )


async def audit_log(
    conn: ReadConnection,
    principal: Principal,
    filters: AuditFilters,
    *,
    limit: int,
    cursor: str | None,
) -> Page[AuditEntry]:
    """A page of the audit log, newest first.

    Raises:
        Forbidden: not an admin. ValidationFailed: a cursor this server did not issue.
    """
    principal.require("audit.read", "only admins read the audit log")
    before = decode_cursor(cursor) if cursor else None
    rows = await queries.list_audit(conn, filters, limit=limit + 1, before=before)
    return keyset_page(rows, limit, lambda row: (row.at, row.id))
