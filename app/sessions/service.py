"""Opening, touching and ending browser sessions. Sign-in (`app.auth`) opens them; people
(`app.people`) end them all when a password changes or an account is disabled, so a stolen
cookie stops working."""

from __future__ import annotations

from uuid import UUID

from app.db.engine import WriteConnection
from app.kit.secrets import new_token, sha256
from app.sessions import queries
from app.sessions.cookies import SESSION_LIFETIME, CookieSigner


async def open_session(conn: WriteConnection, signer: CookieSigner, user_id: UUID) -> str:
    """Start a session for the account; returns the signed cookie value (its only copy). The
    account's expired sessions are pruned on the way."""
    token = new_token()
    await queries.delete_expired_sessions(conn, user_id)
    await queries.insert_session(
        conn, user_id=user_id, token_sha256=sha256(token), lifetime=SESSION_LIFETIME
    )
    return signer.sign(token)


async def close_session(conn: WriteConnection, signer: CookieSigner, cookie: str | None) -> None:
    """End the session the cookie names, if any (signing out twice is not an error)."""
    token = signer.unsign(cookie) if cookie else None
    if token is not None:
        await queries.delete_session(conn, sha256(token))


async def touch(conn: WriteConnection, session_id: UUID) -> None:
    await queries.touch_session(conn, session_id)


async def end_all(conn: WriteConnection, user_id: UUID) -> int:
    """End every session of an account: how a cookie is invalidated server-side."""
    return await queries.delete_sessions_of(conn, user_id)


async def prune_expired(conn: WriteConnection) -> int:
    """Delete every expired session (opening one prunes only the account's own)."""
    return await queries.delete_expired_sessions(conn)
