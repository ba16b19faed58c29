"""OAuth access tokens resolve to the person who consented, for the resource they were issued
for, until they expire or are revoked (the OAuth server that issues them comes with MCP)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.auth import service as auth_service
from app.kit.secrets import sha256
from tests.accounts import make_account
from tests.support import on_connection

MCP = "http://127.0.0.1:8000/mcp"


async def _issue(conn: AsyncConnection, user_id: uuid.UUID, **overrides: object) -> str:
    token = f"cat_{uuid.uuid4().hex}"
    await conn.execute(
        text(
            "INSERT INTO oauth_clients (client_id, redirect_uris, metadata) "
            "VALUES ('client', ARRAY['http://127.0.0.1/cb'], '{}') ON CONFLICT DO NOTHING"
        )
    )
    values = {
        "token_sha256": sha256(token),
        "user_id": user_id,
        "resource": MCP,
        "expires": timedelta(hours=1),
        "revoked": None,
        **overrides,
    }
    await conn.execute(
        text(
            "INSERT INTO oauth_tokens (token_sha256, kind, client_id, user_id, scopes, resource,"
            " family_id, expires_at, revoked_at) VALUES (:token_sha256, 'access', 'client',"
            " :user_id, ARRAY['corpus'], :resource, gen_random_uuid(),"
            " now() + :expires, :revoked)"
        ),
        values,
    )
    return token


async def test_an_access_token_carries_exactly_its_persons_role(conn: AsyncConnection) -> None:
    person = await make_account(conn, "editor")
    token = await _issue(conn, person.user.id)
    here = on_connection(conn)
    principal = await auth_service.principal_from_access_token(here, here, token, resource=MCP)
    assert principal is not None
    assert (principal.user_id, principal.role, principal.credential) == (
        person.user.id,
        "editor",
        "oauth",
    )


@pytest.mark.parametrize(
    "overrides",
    [
        {"expires": timedelta(seconds=-1)},
        {"revoked": datetime(2026, 1, 1, tzinfo=UTC)},
        {"resource": "http://127.0.0.1:8000/other"},
    ],
    ids=["expired", "revoked", "other-resource"],
)
async def test_an_expired_revoked_or_misdirected_token_is_refused(
    conn: AsyncConnection, overrides: dict[str, object]
) -> None:
    person = await make_account(conn, "editor")
    token = await _issue(conn, person.user.id, **overrides)
    here = on_connection(conn)
    assert await auth_service.principal_from_access_token(here, here, token, resource=MCP) is None
