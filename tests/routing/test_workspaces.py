"""A workspace's remote endpoint: its bearer is stored sealed and never shown, a bad URL is
refused (an address inside the network, in any spelling, or credentials in the URL), only
admins see the URL, and making the workspace local again forgets the bearer."""

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
# A public address, never contacted here: its host needs no DNS to be checked.
PARTNER_URL = "https://93.184.215.14/corpus"


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
            "remote_url": PARTNER_URL,
            "remote_token": TOKEN,
        },
    )
    assert created.status_code == 201
    assert created.json()["remote_url"] == PARTNER_URL
    assert TOKEN not in created.text
    assert TOKEN not in (await client.get("/api/workspaces")).text
    sealed = await _sealed(conn, "partner")
    assert sealed is not None
    assert TOKEN.encode() not in sealed
    assert SecretBox(TEST_SECRET).open(sealed) == TOKEN

    retitled = await client.patch("/api/workspaces/partner", json={"title": "Partner docs"})
    assert retitled.json()["remote_url"] == PARTNER_URL
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


# Every spelling of an address inside the network that was once accepted, and the plain ones.
INSIDE = [
    "http://127.0.0.1:8000",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f000001/",
    "http://[::1]:8000/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://localhost:8000/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.0.0.5/",
    "http://172.16.0.1/",
    "http://192.168.1.10/",
    "http://100.64.0.1/",
    "http://[fd00::5]/",
    "http://0.0.0.0:8000/",
    "http://0/",
    "http://[::]/",
    "http://224.0.0.1/",
]


def _refused_at(reply: httpx.Response, field: str) -> bool:
    error = reply.json()["error"]
    locs = [d.get("loc") for d in error.get("details") or []]
    return (
        reply.status_code == 422
        and error["code"] == "validation_error"
        and (["body", field] in locs)
    )


@pytest.mark.parametrize("url", INSIDE)
async def test_a_remote_url_inside_the_network_is_refused_in_any_spelling(
    client: httpx.AsyncClient, conn: AsyncConnection, url: str
) -> None:
    await authorize(client, conn, "admin")
    created = await client.post(
        "/api/workspaces", json={"slug": "inside", "title": "I", "remote_url": url}
    )
    assert _refused_at(created, "remote_url"), created.text
    assert (await client.post("/api/workspaces", json={"slug": "local", "title": "L"})).is_success
    changed = await client.patch("/api/workspaces/local", json={"remote_url": url})
    assert _refused_at(changed, "remote_url"), changed.text
    listed = (await client.get("/api/workspaces")).json()["items"]
    assert {w["slug"]: w["remote_url"] for w in listed}["local"] is None
    assert "inside" not in {w["slug"] for w in listed}


@pytest.mark.parametrize(
    "url", ["https://user:pw@93.184.215.14/corpus", "https://ck_token@93.184.215.14/"]
)
async def test_a_remote_url_with_credentials_in_it_is_refused(
    client: httpx.AsyncClient, conn: AsyncConnection, url: str
) -> None:
    await authorize(client, conn, "admin")
    created = await client.post(
        "/api/workspaces", json={"slug": "userinfo", "title": "U", "remote_url": url}
    )
    assert _refused_at(created, "remote_url"), created.text


async def test_only_admins_see_a_remote_workspace_s_url(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "admin")
    created = await client.post(
        "/api/workspaces", json={"slug": "partner", "title": "P", "remote_url": PARTNER_URL}
    )
    assert created.status_code == 201
    shown = {w["slug"]: w for w in (await client.get("/api/workspaces")).json()["items"]}
    assert shown["partner"]["remote_url"] == PARTNER_URL
    for role in ("viewer", "editor"):
        await authorize(client, conn, role)
        reply = await client.get("/api/workspaces")
        assert reply.status_code == 200
        shown = {w["slug"]: w for w in reply.json()["items"]}
        assert shown["partner"]["remote_url"] is None
        assert "93.184.215.14" not in reply.text
