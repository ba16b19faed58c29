"""SQL of the OAuth authorization server: clients, consent transactions, codes, tokens and the
consents people gave. Codes and tokens are found by their sha256; nothing raw is stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict
from uuid import UUID

from sqlalchemy import ColumnElement, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import (
    oauth_authorizations,
    oauth_clients,
    oauth_codes,
    oauth_consents,
    oauth_tokens,
)
from app.oauth.schemas import ClientMetadata as ClientMetadata


class ConsentParams(TypedDict):
    """A validated /authorize request, stored as JSON in `oauth_authorizations.params` until
    the person answers."""

    state: str | None
    scopes: list[str]
    code_challenge: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    resource: str | None


@dataclass(frozen=True, slots=True)
class Client:
    client_id: str
    client_secret_encrypted: bytes | None
    metadata: ClientMetadata


@dataclass(frozen=True, slots=True)
class OpenAuthorization:
    """A consent transaction waiting for its answer, with the name its client gave itself."""

    client_id: str
    client_name: str | None
    params: ConsentParams


@dataclass(frozen=True, slots=True)
class Code:
    client_id: str
    user_id: UUID
    scopes: list[str]
    code_challenge: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    resource: str | None
    expires_at: datetime
    used_at: datetime | None
    family_id: UUID | None  # the token family it issued, once redeemed


@dataclass(frozen=True, slots=True)
class Token:
    client_id: str
    user_id: UUID
    scopes: list[str]
    resource: str | None
    family_id: UUID
    expires_at: datetime
    used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class Consent:
    """A client a person authorised, with when it last got a token."""

    client_id: str
    client_name: str | None
    redirect_uris: list[str]
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None


def _expires_in(seconds: int) -> ColumnElement[datetime]:
    return func.now() + func.make_interval(0, 0, 0, 0, 0, 0, seconds)


_CODE = [
    oauth_codes.c.client_id,
    oauth_codes.c.user_id,
    oauth_codes.c.scopes,
    oauth_codes.c.code_challenge,
    oauth_codes.c.redirect_uri,
    oauth_codes.c.redirect_uri_provided_explicitly,
    oauth_codes.c.resource,
    oauth_codes.c.expires_at,
    oauth_codes.c.used_at,
    oauth_codes.c.family_id,
]

_TOKEN = [
    oauth_tokens.c.client_id,
    oauth_tokens.c.user_id,
    oauth_tokens.c.scopes,
    oauth_tokens.c.resource,
    oauth_tokens.c.family_id,
    oauth_tokens.c.expires_at,
    oauth_tokens.c.used_at,
    oauth_tokens.c.revoked_at,
]


async def insert_client(
    conn: WriteConnection,
    *,
    client_id: str,
    client_secret_encrypted: bytes | None,
    client_name: str | None,
    redirect_uris: list[str],
    metadata: ClientMetadata,
) -> None:
    await conn.execute(
        insert(oauth_clients).values(
            client_id=client_id,
            client_secret_encrypted=client_secret_encrypted,
            client_name=client_name,
            redirect_uris=redirect_uris,
            metadata=metadata,
        )
    )


async def upsert_document_client(
    conn: WriteConnection, *, client_id: str, client_name: str | None, metadata: ClientMetadata
) -> None:
    """Keep a metadata document client's row (codes, tokens and consents refer to it) up to
    date with its document; written only when the document changed."""
    values = {
        "client_id": client_id,
        "client_secret_encrypted": None,
        "client_name": client_name,
        "redirect_uris": list(metadata.get("redirect_uris") or []),
        "metadata": metadata,
    }
    statement = pg_insert(oauth_clients).values(**values)
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=[oauth_clients.c.client_id],
            set_={
                "client_name": statement.excluded.client_name,
                "redirect_uris": statement.excluded.redirect_uris,
                "metadata": statement.excluded.metadata,
            },
            where=oauth_clients.c.metadata.is_distinct_from(statement.excluded.metadata),
        )
    )


async def get_client(conn: ReadConnection, client_id: str) -> Client | None:
    statement = select(
        oauth_clients.c.client_id,
        oauth_clients.c.client_secret_encrypted,
        oauth_clients.c.metadata,
    ).where(oauth_clients.c.client_id == client_id)
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else Client(**row)


async def mark_client_authorized(conn: WriteConnection, client_id: str) -> None:
    """Record a client's first approval (later ones change nothing)."""
    await conn.execute(
        update(oauth_clients)
        .where(oauth_clients.c.client_id == client_id, oauth_clients.c.authorized_at.is_(None))
        .values(authorized_at=func.now())
    )


async def delete_unauthorized_clients(conn: WriteConnection, older_than_s: int) -> int:
    """Delete clients registered more than `older_than_s` ago that nobody ever approved (their
    pending consent transactions go with them); returns how many."""
    result = await conn.execute(
        delete(oauth_clients).where(
            oauth_clients.c.authorized_at.is_(None),
            oauth_clients.c.created_at
            <= func.now() - func.make_interval(0, 0, 0, 0, 0, 0, older_than_s),
        )
    )
    return result.rowcount


async def insert_authorization(
    conn: WriteConnection, *, tx: str, client_id: str, params: ConsentParams, expires_in_s: int
) -> None:
    await conn.execute(
        insert(oauth_authorizations).values(
            id=tx, client_id=client_id, params=params, expires_at=_expires_in(expires_in_s)
        )
    )


async def open_authorization(conn: ReadConnection, tx: str) -> OpenAuthorization | None:
    """An unexpired, unanswered consent transaction, with its client."""
    statement = (
        select(
            oauth_authorizations.c.client_id,
            oauth_clients.c.client_name,
            oauth_authorizations.c.params,
        )
        .join(oauth_clients, oauth_clients.c.client_id == oauth_authorizations.c.client_id)
        .where(
            oauth_authorizations.c.id == tx,
            oauth_authorizations.c.expires_at > func.now(),
            oauth_authorizations.c.answered_at.is_(None),
        )
    )
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else OpenAuthorization(**row)


async def answer_authorization(conn: WriteConnection, tx: str, user_id: UUID) -> bool:
    """Mark a transaction answered; False when it was answered already (or expired), so that
    two answers racing each other cannot both issue a code."""
    result = await conn.execute(
        update(oauth_authorizations)
        .where(
            oauth_authorizations.c.id == tx,
            oauth_authorizations.c.answered_at.is_(None),
            oauth_authorizations.c.expires_at > func.now(),
        )
        .values(answered_at=func.now(), user_id=user_id)
    )
    return result.rowcount == 1


async def insert_code(
    conn: WriteConnection,
    *,
    code_sha256: str,
    client_id: str,
    user_id: UUID,
    scopes: list[str],
    code_challenge: str,
    redirect_uri: str,
    redirect_uri_provided_explicitly: bool,
    resource: str | None,
    expires_in_s: int,
) -> None:
    await conn.execute(
        insert(oauth_codes).values(
            code_sha256=code_sha256,
            client_id=client_id,
            user_id=user_id,
            scopes=scopes,
            code_challenge=code_challenge,
            redirect_uri=redirect_uri,
            redirect_uri_provided_explicitly=redirect_uri_provided_explicitly,
            resource=resource,
            expires_at=_expires_in(expires_in_s),
        )
    )


async def get_code(conn: ReadConnection, code_sha256: str, client_id: str) -> Code | None:
    statement = select(*_CODE).where(
        oauth_codes.c.code_sha256 == code_sha256, oauth_codes.c.client_id == client_id
    )
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else Code(**row)


async def take_code(
    conn: WriteConnection, code_sha256: str, client_id: str, family_id: UUID
) -> Code | None:
    """Mark a code used by the token family `family_id` and return it; None when it was used
    already: a code is redeemed once, however many try at once (the row lock queues them)."""
    result = await conn.execute(
        update(oauth_codes)
        .where(
            oauth_codes.c.code_sha256 == code_sha256,
            oauth_codes.c.client_id == client_id,
            oauth_codes.c.used_at.is_(None),
        )
        .values(used_at=func.now(), family_id=family_id)
        .returning(*_CODE)
    )
    row = result.mappings().first()
    return None if row is None else Code(**row)


async def insert_tokens(
    conn: WriteConnection,
    *,
    client_id: str,
    user_id: UUID,
    scopes: list[str],
    resource: str | None,
    family_id: UUID,
    access_sha256: str,
    access_expires_in_s: int,
    refresh_sha256: str,
    refresh_expires_in_s: int,
) -> None:
    """Store a grant's access and refresh token, of one family."""
    common = {
        "client_id": client_id,
        "user_id": user_id,
        "scopes": scopes,
        "resource": resource,
        "family_id": family_id,
    }
    # One multi-row VALUES, not executemany: the expiry of each row is a SQL expression.
    await conn.execute(
        insert(oauth_tokens).values(
            [
                {
                    **common,
                    "token_sha256": access_sha256,
                    "kind": "access",
                    "expires_at": _expires_in(access_expires_in_s),
                },
                {
                    **common,
                    "token_sha256": refresh_sha256,
                    "kind": "refresh",
                    "expires_at": _expires_in(refresh_expires_in_s),
                },
            ]
        )
    )


async def get_token(
    conn: ReadConnection, token_sha256: str, kind: str, client_id: str | None = None
) -> Token | None:
    statement = select(*_TOKEN).where(
        oauth_tokens.c.token_sha256 == token_sha256, oauth_tokens.c.kind == kind
    )
    if client_id is not None:
        statement = statement.where(oauth_tokens.c.client_id == client_id)
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else Token(**row)


async def use_refresh_token(conn: WriteConnection, token_sha256: str) -> bool:
    """Mark a live refresh token used; False when it was used or revoked already."""
    result = await conn.execute(
        update(oauth_tokens)
        .where(
            oauth_tokens.c.token_sha256 == token_sha256,
            oauth_tokens.c.kind == "refresh",
            oauth_tokens.c.used_at.is_(None),
            oauth_tokens.c.revoked_at.is_(None),
        )
        .values(used_at=func.now())
    )
    return result.rowcount == 1


async def revoke_family(conn: WriteConnection, family_id: UUID) -> None:
    await conn.execute(
        update(oauth_tokens)
        .where(oauth_tokens.c.family_id == family_id, oauth_tokens.c.revoked_at.is_(None))
        .values(revoked_at=func.now())
    )


async def revoke_user_client(conn: WriteConnection, user_id: UUID, client_id: str) -> int:
    """Revoke every live token of the person and client and drop their pending codes; returns
    how many tokens were revoked."""
    revoked = await conn.execute(
        update(oauth_tokens)
        .where(
            oauth_tokens.c.user_id == user_id,
            oauth_tokens.c.client_id == client_id,
            oauth_tokens.c.revoked_at.is_(None),
        )
        .values(revoked_at=func.now())
    )
    await conn.execute(
        delete(oauth_codes).where(
            oauth_codes.c.user_id == user_id, oauth_codes.c.client_id == client_id
        )
    )
    return revoked.rowcount


async def upsert_consent(
    conn: WriteConnection, user_id: UUID, client_id: str, scopes: list[str]
) -> None:
    statement = pg_insert(oauth_consents).values(
        user_id=user_id, client_id=client_id, scopes=scopes
    )
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=["user_id", "client_id"],
            set_={"scopes": statement.excluded.scopes, "created_at": func.now()},
        )
    )


async def lock_consent(conn: WriteConnection, user_id: UUID, client_id: str) -> bool:
    """Hold the person's consent to the client until the transaction ends; False when there is
    none. A disconnect deletes the row, so it waits for a token being issued under the lock, and
    its revocation then sees the new tokens."""
    statement = (
        select(oauth_consents.c.user_id)
        .where(oauth_consents.c.user_id == user_id, oauth_consents.c.client_id == client_id)
        .with_for_update(read=True)
    )
    return (await conn.execute(statement)).first() is not None


async def delete_consent(conn: WriteConnection, user_id: UUID, client_id: str) -> bool:
    result = await conn.execute(
        delete(oauth_consents).where(
            oauth_consents.c.user_id == user_id, oauth_consents.c.client_id == client_id
        )
    )
    return result.rowcount == 1


async def list_consents(conn: ReadConnection, user_id: UUID) -> list[Consent]:
    """The clients a person authorised, with when each last got a token."""
    last_token = (
        select(func.max(oauth_tokens.c.created_at))
        .where(
            oauth_tokens.c.user_id == oauth_consents.c.user_id,
            oauth_tokens.c.client_id == oauth_consents.c.client_id,
        )
        .scalar_subquery()
        .label("last_used_at")
    )
    statement = (
        select(
            oauth_consents.c.client_id,
            oauth_clients.c.client_name,
            oauth_clients.c.redirect_uris,
            oauth_consents.c.scopes,
            oauth_consents.c.created_at,
            last_token,
        )
        .join(oauth_clients, oauth_clients.c.client_id == oauth_consents.c.client_id)
        .where(oauth_consents.c.user_id == user_id)
        .order_by(oauth_consents.c.created_at.desc())
    )
    return [Consent(**row) for row in (await conn.execute(statement)).mappings()]


async def delete_expired(conn: WriteConnection) -> dict[str, int]:
    """Delete consent transactions, codes and tokens past their expiry; counts by table.

    A spent refresh token stays until it expires, so that its reuse is caught until then."""
    counts: dict[str, int] = {}
    for table in (oauth_authorizations, oauth_codes, oauth_tokens):
        result = await conn.execute(delete(table).where(table.c.expires_at <= func.now()))
        counts[table.name] = result.rowcount
    return counts


async def withdraw_user(conn: WriteConnection, user_id: UUID) -> int:
    """Withdraw every client's access to an account: consents, pending codes and live tokens;
    returns how many tokens were revoked."""
    await conn.execute(delete(oauth_consents).where(oauth_consents.c.user_id == user_id))
    await conn.execute(delete(oauth_codes).where(oauth_codes.c.user_id == user_id))
    result = await conn.execute(
        update(oauth_tokens)
        .where(oauth_tokens.c.user_id == user_id, oauth_tokens.c.revoked_at.is_(None))
        .values(revoked_at=func.now())
    )
    return result.rowcount
