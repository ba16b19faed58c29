"""API keys: minted by admins for an account, shown once, stored as sha256 with a visible
prefix, bound to a workspace and a persona when asked, revoked at once."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.config import Settings
from tests.accounts import Account, make_account
from tests.support import run_corpus, run_corpus_here

KEY_SHAPE = re.compile(r"^ck_[A-Za-z0-9_-]{32,}$")


@pytest.fixture
async def admin(conn: AsyncConnection) -> Account:
    return await make_account(conn, "admin")


@pytest.fixture
async def agent(conn: AsyncConnection) -> Account:
    return await make_account(conn, "editor", kind="agent")


async def _mint(client: httpx.AsyncClient, admin: Account, **body: object) -> dict[str, object]:
    reply = await client.post("/api/keys", json=body, headers=admin.bearer)
    assert reply.status_code == 201, reply.text
    minted: dict[str, object] = reply.json()
    return minted


async def test_a_key_is_shown_once_and_stored_as_sha256(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account, agent: Account
) -> None:
    minted = await _mint(client, admin, user_id=str(agent.user.id), name="ci bot")
    key = str(minted["key"])
    assert KEY_SHAPE.match(key)
    assert minted["prefix"] == key[:12]
    assert (minted["email"], minted["name"]) == (agent.user.email, "ci bot")

    listed = await client.get("/api/keys", headers=admin.bearer)
    assert key not in listed.text
    assert "key" not in next(k for k in listed.json()["items"] if k["id"] == minted["id"])
    stored = (await conn.execute(text("SELECT api_keys::text FROM api_keys"))).scalars().all()
    assert not any(key in row or key[12:] in row for row in stored)

    me = await client.get("/api/me", headers={"Authorization": f"Bearer {key}"})
    assert me.status_code == 200
    assert (me.json()["email"], me.json()["kind"]) == (agent.user.email, "agent")


async def test_a_revoked_key_fails_on_its_next_request(
    client: httpx.AsyncClient, admin: Account, agent: Account
) -> None:
    assert (await client.get("/api/documents", headers=agent.bearer)).status_code == 200
    listed = (await client.get("/api/keys", headers=admin.bearer)).json()["items"]
    key_id = next(k["id"] for k in listed if k["email"] == agent.user.email)
    assert (await client.delete(f"/api/keys/{key_id}", headers=admin.bearer)).status_code == 204
    refused = await client.get("/api/documents", headers=agent.bearer)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthenticated"
    listed = (await client.get("/api/keys", headers=admin.bearer)).json()["items"]
    assert next(k for k in listed if k["id"] == key_id)["revoked_at"] is not None
    # Revoking again changes nothing; an unknown key is a 404.
    assert (await client.delete(f"/api/keys/{key_id}", headers=admin.bearer)).status_code == 204
    unknown = await client.delete(
        "/api/keys/00000000-0000-0000-0000-000000000000", headers=admin.bearer
    )
    assert unknown.status_code == 404


async def test_a_key_records_when_it_was_last_used(
    client: httpx.AsyncClient, admin: Account, agent: Account
) -> None:
    listed = (await client.get("/api/keys", headers=admin.bearer)).json()["items"]
    assert next(k for k in listed if k["email"] == agent.user.email)["last_used_at"] is None
    await client.get("/api/me", headers=agent.bearer)
    listed = (await client.get("/api/keys", headers=admin.bearer)).json()["items"]
    assert next(k for k in listed if k["email"] == agent.user.email)["last_used_at"] is not None


@pytest.mark.parametrize(
    "header",
    ["Bearer ck_not-a-real-key-0123456789012345678901", "Bearer something-else", "Basic abc"],
)
async def test_a_bad_authorization_header_is_a_401_with_a_challenge(
    client: httpx.AsyncClient, header: str
) -> None:
    reply = await client.get("/api/documents", headers={"Authorization": header})
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "unauthenticated"
    assert reply.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "body",
    [
        {"user_id": "00000000-0000-0000-0000-000000000000", "name": "x"},
        {"name": "missing user"},
        {"user_id": "OWNER", "name": ""},
        {"user_id": "OWNER", "name": "x", "workspace": "no-such-workspace"},
        {"user_id": "OWNER", "name": "x", "extra": True},
    ],
)
async def test_a_bad_key_request_is_refused_and_mints_nothing(
    client: httpx.AsyncClient,
    conn: AsyncConnection,
    admin: Account,
    agent: Account,
    body: dict[str, object],
) -> None:
    body = {k: (str(agent.user.id) if v == "OWNER" else v) for k, v in body.items()}
    before = (await conn.execute(text("SELECT count(*) FROM api_keys"))).scalar_one()
    reply = await client.post("/api/keys", json=body, headers=admin.bearer)
    assert reply.status_code == 422
    assert reply.json()["error"]["code"] == "validation_error"
    assert (await conn.execute(text("SELECT count(*) FROM api_keys"))).scalar_one() == before


async def test_a_workspace_key_sees_and_writes_its_workspace_only(
    client: httpx.AsyncClient, admin: Account, agent: Account
) -> None:
    made = await client.post(
        "/api/workspaces", json={"slug": "team-a", "title": "Team A"}, headers=admin.bearer
    )
    assert made.status_code == 201
    elsewhere = await client.post(
        "/api/documents",
        json={"title": "Default doc", "content": "Zebra crossings in the default workspace."},
        headers=admin.bearer,
    )
    minted = await _mint(
        client,
        admin,
        user_id=str(agent.user.id),
        name="scoped",
        workspace="team-a",
        persona="backend",
    )
    scoped = {"Authorization": f"Bearer {minted['key']}"}
    assert (await client.get("/api/me", headers=scoped)).json()["persona"] == "backend"

    inside = await client.post(
        "/api/documents",
        json={"title": "A doc", "content": "Zebra notes of team A."},
        headers=scoped,
    )
    assert inside.status_code == 201
    assert inside.json()["workspace"] == "team-a"
    outside = await client.post(
        "/api/documents",
        json={"title": "B", "content": "Zebra elsewhere.", "workspace": "default"},
        headers=scoped,
    )
    assert outside.status_code == 403

    listed = (await client.get("/api/documents", headers=scoped)).json()["items"]
    assert {d["workspace"] for d in listed} == {"team-a"}
    other_id = elsewhere.json()["id"]
    assert (await client.get(f"/api/documents/{other_id}", headers=scoped)).status_code == 404
    assert (
        await client.get(f"/api/documents/{other_id}/chunks", headers=scoped)
    ).status_code == 404
    hits = (await client.post("/api/search", json={"query": "zebra"}, headers=scoped)).json()
    assert {h["workspace"] for h in hits["hits"]} == {"team-a"}


def test_keys_create_prints_the_key_last_and_keys_revoke_revokes_it(data_dir: Path) -> None:
    email = f"bot-{uuid.uuid4().hex[:6]}@example.com"
    made = run_corpus(
        ["users", "create", "--email", email, "--role", "editor", "--agent"], data_dir
    )
    assert made.returncode == 0, made.stderr
    minted = run_corpus(["keys", "create", "--email", email, "--name", "ci"], data_dir)
    assert minted.returncode == 0, minted.stderr
    key = minted.stdout.rstrip("\n").splitlines()[-1]
    assert KEY_SHAPE.match(key)
    key_id = re.search(r"created key ([0-9a-f-]{36})", minted.stdout)
    assert key_id is not None
    revoked = run_corpus(["keys", "revoke", "--id", key_id.group(1)], data_dir)
    assert revoked.returncode == 0, revoked.stderr
    unknown = run_corpus(["keys", "revoke", "--id", str(uuid.uuid4())], data_dir)
    assert unknown.returncode == 1
    assert "no such API key" in unknown.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["create", "--email", "nobody@example.com", "--name", "x"],
        ["create", "--email", "x@example.com", "--name", "x", "--workspace", "Bad Slug"],
        ["revoke", "--id", "not-a-uuid"],
    ],
)
def test_keys_commands_refuse_bad_input(args: list[str], settings: Settings) -> None:
    result = run_corpus_here(["keys", *args], settings.database_url)
    assert result.returncode == 2
    assert "corpus: " in result.stderr or "usage:" in result.stderr
