"""SQL of API keys (this package's own table), and of resolving a credential to the account
behind it: a session, a key or an OAuth access token, each joined to its account in one
statement. Those lookups only read the sessions', OAuth's and people's tables; their writes
belong to `app.sessions`, `app.oauth` and `app.people`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import RowMapping, bindparam, func, insert, select, update

from app.access.capabilities import Role
from app.access.principal import Kind
from app.auth.schemas import ApiKey
from app.db.engine import ReadConnection, WriteConnection
from app.db.sql import stale
from app.db.tables import api_keys, oauth_tokens, sessions, users, workspaces

# --- who is behind a credential -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    """The account behind a credential: what a Principal is made of."""

    user_id: UUID
    email: str
    display_name: str
    role: Role
    kind: Kind
    default_persona: str | None
    must_change_password: bool


@dataclass(frozen=True, slots=True)
class SessionAccount:
    account: Account
    session_id: UUID
    last_seen_at: datetime | None
    # As for a key (below): whether the session's and the account's last activity are due.
    session_stale: bool = True
    account_stale: bool = True


@dataclass(frozen=True, slots=True)
class KeyAccount:
    account: Account
    key_id: UUID
    key_persona: str | None
    last_used_at: datetime | None
    workspace: str | None  # the slug of the key's workspace scope
    # Whether the key's last use and the account's last activity are due to be written again
    # (`stale`): read with the key, so that a request in the same minute writes nothing and
    # sends no statement for it.
    key_stale: bool = True
    account_stale: bool = True


@dataclass(frozen=True, slots=True)
class TokenAccount:
    account: Account
    client_id: str
    account_stale: bool = True


_ACCOUNT = [
    users.c.id.label("user_id"),
    users.c.email,
    users.c.display_name,
    users.c.role,
    users.c.kind,
    users.c.default_persona,
    users.c.must_change_password,
]


def _account(row: RowMapping) -> Account:
    return Account(
        user_id=row["user_id"],
        email=row["email"],
        display_name=row["display_name"],
        role=row["role"],
        kind=row["kind"],
        default_persona=row["default_persona"],
        must_change_password=row["must_change_password"],
    )


# The lookups are built once: a request resolves its credential before anything else, and
# building the statement anew (columns, joins, the staleness tests) cost more Python than running
# it (a profile of `POST /api/search`, docs/BENCHMARKS.md).
_SESSION_ACCOUNT = (
    select(
        *_ACCOUNT,
        sessions.c.id.label("session_id"),
        sessions.c.last_seen_at,
        stale(sessions.c.last_seen_at).label("session_stale"),
        stale(users.c.last_seen_at).label("account_stale"),
    )
    .join(users, users.c.id == sessions.c.user_id)
    .where(
        sessions.c.token_sha256 == bindparam("token_sha256"),
        sessions.c.expires_at > func.now(),
        users.c.active,
    )
)

_KEY_ACCOUNT = (
    select(
        *_ACCOUNT,
        api_keys.c.id.label("key_id"),
        api_keys.c.persona.label("key_persona"),
        api_keys.c.last_used_at,
        workspaces.c.slug.label("workspace"),
        stale(api_keys.c.last_used_at).label("key_stale"),
        stale(users.c.last_seen_at).label("account_stale"),
    )
    .join(users, users.c.id == api_keys.c.user_id)
    .outerjoin(workspaces, workspaces.c.id == api_keys.c.workspace_id)
    .where(
        api_keys.c.secret_sha256 == bindparam("secret_sha256"),
        api_keys.c.revoked_at.is_(None),
        users.c.active,
    )
)

_TOKEN_ACCOUNT = (
    select(
        *_ACCOUNT,
        oauth_tokens.c.client_id,
        stale(users.c.last_seen_at).label("account_stale"),
    )
    .join(users, users.c.id == oauth_tokens.c.user_id)
    .where(
        oauth_tokens.c.token_sha256 == bindparam("token_sha256"),
        oauth_tokens.c.kind == "access",
        oauth_tokens.c.revoked_at.is_(None),
        oauth_tokens.c.expires_at > func.now(),
        oauth_tokens.c.resource == bindparam("resource"),
        users.c.active,
    )
)


async def session_account(conn: ReadConnection, token_sha256: str) -> SessionAccount | None:
    """The active account of an unexpired session, with the session's id and last-seen time."""
    result = await conn.execute(_SESSION_ACCOUNT, {"token_sha256": token_sha256})
    row = result.mappings().first()
    if row is None:
        return None
    return SessionAccount(
        _account(row),
        row["session_id"],
        row["last_seen_at"],
        session_stale=row["session_stale"],
        account_stale=row["account_stale"],
    )


async def key_account(conn: ReadConnection, secret_sha256: str) -> KeyAccount | None:
    """The active account of an unrevoked key, with the key's scope, persona and last use."""
    result = await conn.execute(_KEY_ACCOUNT, {"secret_sha256": secret_sha256})
    row = result.mappings().first()
    if row is None:
        return None
    return KeyAccount(
        _account(row),
        row["key_id"],
        row["key_persona"],
        row["last_used_at"],
        row["workspace"],
        key_stale=row["key_stale"],
        account_stale=row["account_stale"],
    )


async def access_token_account(
    conn: ReadConnection, token_sha256: str, resource: str
) -> TokenAccount | None:
    """The active account of an unexpired, unrevoked OAuth access token issued for `resource`."""
    result = await conn.execute(
        _TOKEN_ACCOUNT, {"token_sha256": token_sha256, "resource": resource}
    )
    row = result.mappings().first()
    if row is None:
        return None
    return TokenAccount(_account(row), row["client_id"], account_stale=row["account_stale"])


async def touch_key(conn: WriteConnection, key_id: UUID) -> None:
    await conn.execute(
        update(api_keys)
        .where(api_keys.c.id == key_id, stale(api_keys.c.last_used_at))
        .values(last_used_at=func.now())
    )


# --- API keys -------------------------------------------------------------------------------


def _key_columns() -> list[Any]:
    return [
        api_keys.c.id,
        api_keys.c.name,
        api_keys.c.prefix,
        api_keys.c.user_id,
        users.c.email,
        workspaces.c.slug.label("workspace"),
        api_keys.c.persona,
        api_keys.c.created_at,
        api_keys.c.last_used_at,
        api_keys.c.revoked_at,
    ]


def _keys_from() -> Any:
    return api_keys.join(users, users.c.id == api_keys.c.user_id).outerjoin(
        workspaces, workspaces.c.id == api_keys.c.workspace_id
    )


async def insert_key(
    conn: WriteConnection,
    *,
    user_id: UUID,
    name: str,
    prefix: str,
    secret_sha256: str,
    workspace_id: UUID | None,
    persona: str | None,
) -> UUID:
    result = await conn.execute(
        insert(api_keys)
        .values(
            user_id=user_id,
            name=name,
            prefix=prefix,
            secret_sha256=secret_sha256,
            workspace_id=workspace_id,
            persona=persona,
        )
        .returning(api_keys.c.id)
    )
    key_id: UUID = result.scalar_one()
    return key_id


async def get_key(conn: ReadConnection, key_id: UUID) -> ApiKey | None:
    statement = select(*_key_columns()).select_from(_keys_from()).where(api_keys.c.id == key_id)
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else ApiKey.model_validate(dict(row))


async def list_keys(conn: ReadConnection) -> list[ApiKey]:
    statement = (
        select(*_key_columns())
        .select_from(_keys_from())
        .order_by(api_keys.c.created_at.desc(), api_keys.c.id)
    )
    return [ApiKey.model_validate(dict(row)) for row in (await conn.execute(statement)).mappings()]


async def revoke_key(conn: WriteConnection, key_id: UUID) -> bool:
    """Revoke a key; False when there is no such key or it was revoked already."""
    result = await conn.execute(
        update(api_keys)
        .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        .values(revoked_at=func.now())
    )
    return result.rowcount == 1
