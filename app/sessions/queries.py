"""SQL of the sessions table: the only module that writes it."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from sqlalchemy import delete, func, insert, update

from app.db.engine import WriteConnection
from app.db.sql import interval, stale
from app.db.tables import sessions


async def insert_session(
    conn: WriteConnection, *, user_id: UUID, token_sha256: str, lifetime: str
) -> datetime:
    """Open a session; returns when it expires."""
    result = await conn.execute(
        insert(sessions)
        .values(
            user_id=user_id,
            token_sha256=token_sha256,
            expires_at=func.now() + interval(lifetime),
            last_seen_at=func.now(),
        )
        .returning(sessions.c.expires_at)
    )
    expires_at: datetime = result.scalar_one()
    return expires_at


async def touch_session(conn: WriteConnection, session_id: UUID) -> None:
    """Record activity, at most once per TOUCH_EVERY."""
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id, stale(sessions.c.last_seen_at))
        .values(last_seen_at=func.now())
    )


async def delete_session(conn: WriteConnection, token_sha256: str) -> None:
    await conn.execute(delete(sessions).where(sessions.c.token_sha256 == token_sha256))


async def delete_expired_sessions(conn: WriteConnection, user_id: UUID | None = None) -> int:
    """Delete expired sessions, of one account or of all; returns how many."""
    statement = delete(sessions).where(sessions.c.expires_at <= func.now())
    if user_id is not None:
        statement = statement.where(sessions.c.user_id == user_id)
    return (await conn.execute(statement)).rowcount


async def delete_sessions_of(conn: WriteConnection, user_id: UUID) -> int:
    """Delete every session of an account; returns how many."""
    result = await conn.execute(delete(sessions).where(sessions.c.user_id == user_id))
    return result.rowcount
