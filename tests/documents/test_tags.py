"""The tags a caller may pick (`GET /api/tags`: only from documents they may see); a question
kept to them is tests/agents/test_ask_api.py's."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import Account, make_account


async def _create(client: httpx.AsyncClient, who: Account, **fields: object) -> str:
    body = {"visibility": "org", **fields}
    reply = await client.post("/api/documents", json=body, headers=who.bearer)
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


async def _tags(client: httpx.AsyncClient, who: Account, **params: str) -> dict[str, int]:
    reply = await client.get("/api/tags", params=params, headers=who.bearer)
    assert reply.status_code == 200, reply.text
    return {item["tag"]: item["documents"] for item in reply.json()["items"]}


async def test_tags_are_counted_over_the_documents_the_caller_may_see(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    alice = await make_account(conn, "editor")
    bob = await make_account(conn, "viewer")
    await _create(client, alice, title="Runbook", content="Deploys.", tags=["ops", "deploy"])
    await _create(
        client,
        alice,
        title="Plans",
        content="Secret plans.",
        tags=["ops", "secret-plans"],
        visibility="private",
    )
    assert await _tags(client, alice) == {"ops": 2, "deploy": 1, "secret-plans": 1}
    # A tag carried only by another person's private document is not even named.
    assert await _tags(client, bob) == {"ops": 1, "deploy": 1}
    assert await _tags(client, alice, q="OP") == {"ops": 2}
    assert await _tags(client, alice, q="%") == {}
    refused = await client.get("/api/tags", params={"limit": 0}, headers=bob.bearer)
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "validation_error")
