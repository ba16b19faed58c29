"""SQL of people and agent accounts, and of the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import ColumnElement, delete, func, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import (
    audit_log,
    oauth_codes,
    oauth_consents,
    oauth_tokens,
    sessions,
    users,
)
from app.people.schemas import AuditEntry, AuditFilters, Kind, Role, User, UserUpdate

# No activity for this long makes an account "dormant" in the people list.
DORMANT_AFTER = "60 days"
# Any constant: the key of the advisory lock that serialises first sign-ups.
_FIRST_SIGNUP_LOCK = 0x636F72707573  # "corpus"


def _user_columns() -> list[Any]:
    now = func.now()
    locked = func.coalesce(users.c.locked_until > now, False).label("locked")
    dormant = (
        func.coalesce(users.c.last_seen_at, users.c.created_at)
        < now - text(f"interval '{DORMANT_AFTER}'")
    ).label("dormant")
    return [
        users.c.id,
        users.c.email,
        users.c.display_name,
        users.c.role,
        users.c.kind,
        users.c.active,
        locked,
        dormant,
        users.c.last_seen_at,
        users.c.created_at,
        users.c.default_persona.label("persona"),
    ]


async def insert_user(
    conn: WriteConnection,
    *,
    email: str,
    display_name: str,
    password_hash: str | None,
    role: Role,
    kind: Kind,
    must_change_password: bool = False,
    oidc_subject: str | None = None,
) -> UUID | None:
    """Insert an account; None when the email is taken (nothing written)."""
    result = await conn.execute(
        pg_insert(users)
        .values(
            email=email,
            display_name=display_name,
            password_hash=password_hash,
            role=role,
            kind=kind,
            must_change_password=must_change_password,
            oidc_subject=oidc_subject,
        )
        .on_conflict_do_nothing(index_elements=["email"])
        .returning(users.c.id)
    )
    user_id: UUID | None = result.scalar()
    return user_id


async def _one_user(conn: ReadConnection, condition: ColumnElement[bool]) -> User | None:
    row = (await conn.execute(select(*_user_columns()).where(condition))).mappings().first()
    return User.model_validate(dict(row)) if row else None


async def get_user(conn: ReadConnection, user_id: UUID) -> User | None:
    return await _one_user(conn, users.c.id == user_id)


async def get_user_by_email(conn: ReadConnection, email: str) -> User | None:
    return await _one_user(conn, users.c.email == email)


async def get_user_by_oidc_subject(conn: ReadConnection, subject: str) -> User | None:
    return await _one_user(conn, users.c.oidc_subject == subject)


async def list_users(
    conn: ReadConnection, *, limit: int, after: tuple[datetime, UUID] | None
) -> list[User]:
    """A page of accounts, oldest first (the first admin heads the list)."""
    statement = select(*_user_columns())
    if after is not None:
        statement = statement.where(tuple_(users.c.created_at, users.c.id) > tuple_(*after))
    statement = statement.order_by(users.c.created_at, users.c.id).limit(limit)
    return [User.model_validate(dict(row)) for row in (await conn.execute(statement)).mappings()]


async def count_users(conn: ReadConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(users))).scalar_one())


async def serialise_first_signup(conn: WriteConnection) -> None:
    """Until this transaction ends, no other sign-up can decide who is first."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _FIRST_SIGNUP_LOCK})


async def lock_active_admins(conn: WriteConnection) -> list[UUID]:
    """The active admins' ids, their rows locked until the transaction ends, so that two
    admins demoting each other at once cannot leave none."""
    statement = (
        select(users.c.id)
        .where(users.c.role == "admin", users.c.active)
        .order_by(users.c.id)
        .with_for_update()
    )
    return list((await conn.execute(statement)).scalars())


async def _update_user(conn: WriteConnection, user_id: UUID, **values: object) -> None:
    await conn.execute(
        update(users).where(users.c.id == user_id).values(**values, updated_at=func.now())
    )


async def update_account(conn: WriteConnection, user_id: UUID, data: UserUpdate) -> None:
    """Write the fields the caller set (an explicit `persona: null` clears the default)."""
    values = data.model_dump(exclude_unset=True)
    if "persona" in values:
        values["default_persona"] = values.pop("persona")
    await _update_user(conn, user_id, **values)


async def set_password_hash(
    conn: WriteConnection, user_id: UUID, *, password_hash: str, must_change_password: bool
) -> None:
    await _update_user(
        conn, user_id, password_hash=password_hash, must_change_password=must_change_password
    )


async def clear_lock(conn: WriteConnection, user_id: UUID) -> None:
    """Forget failed sign-ins and lift any lock."""
    await _update_user(conn, user_id, failed_logins=0, locked_until=None)


async def link_oidc_subject(conn: WriteConnection, user_id: UUID, subject: str) -> None:
    await _update_user(conn, user_id, oidc_subject=subject)


async def end_sessions(conn: WriteConnection, user_id: UUID) -> int:
    """End every session of an account: how a cookie is invalidated server-side."""
    result = await conn.execute(delete(sessions).where(sessions.c.user_id == user_id))
    return result.rowcount


async def end_oauth_grants(conn: WriteConnection, user_id: UUID) -> int:
    """Withdraw every OAuth client's access to an account: consents, pending codes and live
    tokens; returns how many tokens were revoked."""
    await conn.execute(delete(oauth_consents).where(oauth_consents.c.user_id == user_id))
    await conn.execute(delete(oauth_codes).where(oauth_codes.c.user_id == user_id))
    result = await conn.execute(
        update(oauth_tokens)
        .where(oauth_tokens.c.user_id == user_id, oauth_tokens.c.revoked_at.is_(None))
        .values(revoked_at=func.now())
    )
    return result.rowcount


# --- audit log ------------------------------------------------------------------------------


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
    if before is not None:
        statement = statement.where(tuple_(audit_log.c.at, audit_log.c.id) < tuple_(*before))
    statement = statement.order_by(audit_log.c.at.desc(), audit_log.c.id.desc()).limit(limit)
    rows = (await conn.execute(statement)).mappings()
    return [AuditEntry.model_validate(dict(row)) for row in rows]
