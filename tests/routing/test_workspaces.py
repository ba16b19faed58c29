"""A workspace's remote endpoint: its bearer is stored sealed and never shown, a bad URL is
refused, and making the workspace local again forgets the bearer."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import workspaces
from app.kit.secrets import SecretBox
from tests.accounts import authorize
from tests.support import TEST_SECRET

TOKEN = "partner-bearer-0123456789"


async def _sealed(conn: AsyncConnection, slug: str) -> bytes | None:
    statement = select(workspaces.c.remote_token_encrypted).where(workspaces.c.slug == slug)
    sealed: bytes | None = (await conn.execute(statement)).scalar_one()
    return sealed


async def test_a_remote_workspace_s_bearer_is_sealed_never_shown_and_forgotten_when_local(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "admin")
    created = await client.post(
        "/api/workspaces",
        json={
            "slug": "partner",
            "title": "Partner",
            "remote_url": "https://docs.partner.example/corpus",
            "remote_token": TOKEN,
        },
    )
    assert created.status_code == 201
    assert created.json()["remote_url"] == "https://docs.partner.example/corpus"
    assert TOKEN not in created.text
    assert TOKEN not in (await client.get("/api/workspaces")).text
    sealed = await _sealed(conn, "partner")
    assert sealed is not None
    assert TOKEN.encode() not in sealed
    assert SecretBox(TEST_SECRET).open(sealed) == TOKEN

    retitled = await client.patch("/api/workspaces/partner", json={"title": "Partner docs"})
    assert retitled.json()["remote_url"] == "https://docs.partner.example/corpus"
    assert await _sealed(conn, "partner") == sealed

    local = await client.patch("/api/workspaces/partner", json={"remote_url": None})
    assert local.status_code == 200
    assert local.json()["remote_url"] is None
    assert await _sealed(conn, "partner") is None


@pytest.mark.parametrize(
    "body",
    [
        {"slug": "r1", "title": "R", "remote_url": "ftp://files.example"},
        {"slug": "r2", "title": "R", "remote_url": "https://"},
        {"slug": "r3", "title": "R", "remote_url": "https://a.example", "remote_token": ""},
    ],
)
async def test_a_bad_remote_endpoint_is_refused(
    client: httpx.AsyncClient, conn: AsyncConnection, body: dict[str, object]
) -> None:
    await authorize(client, conn, "admin")
    reply = await client.post("/api/workspaces", json=body)
    assert reply.status_code == 422
    assert reply.json()["error"]["code"] == "validation_error"
    listed = (await client.get("/api/workspaces")).json()["items"]
    assert body["slug"] not in {w["slug"] for w in listed}
