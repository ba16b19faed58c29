"""A private document is its owner's alone: no other person — an admin included — finds it by
any route, nor by what a search's counts, totals or scores give away."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import Account, make_account

SECRET_TERM = "xylophonic"


@pytest.fixture
async def owner(conn: AsyncConnection) -> Account:
    return await make_account(conn, "editor")


@pytest.fixture
async def secret(client: httpx.AsyncClient, owner: Account) -> dict[str, Any]:
    reply = await client.post(
        "/api/documents",
        json={
            "title": "Merger plan",
            "content": f"# Plan\n\nAcquire Zyxcorp with the {SECRET_TERM} offer.",
            "visibility": "private",
            "tags": ["confidential"],
        },
        headers=owner.bearer,
    )
    assert reply.status_code == 201
    body: dict[str, Any] = reply.json()
    return body


@pytest.mark.parametrize("role", ["viewer", "editor", "admin"])
async def test_a_private_document_does_not_exist_for_anyone_else(
    client: httpx.AsyncClient,
    conn: AsyncConnection,
    owner: Account,
    secret: dict[str, Any],
    role: str,
) -> None:
    other = await make_account(conn, role)  # type: ignore[arg-type]
    headers = other.bearer
    url = f"/api/documents/{secret['id']}"
    nowhere = f"/api/documents/{uuid.uuid4()}"
    for method, suffix, body in [
        ("GET", "", None),
        ("GET", "/chunks", None),
        ("PATCH", "", {"title": "Mine now"}),
        ("DELETE", "", None),
    ]:
        reply = await client.request(method, url + suffix, json=body, headers=headers)
        absent = await client.request(method, nowhere + suffix, json=body, headers=headers)
        # The same reply as for a document that does not exist (404; a viewer's edit is 403
        # either way): a refusal of its own would confirm that it exists.
        assert reply.status_code in {403, 404}
        assert (reply.status_code, reply.json()) == (absent.status_code, absent.json()), method
    for params in [
        {},
        {"q": "Merger"},
        {"owner": str(owner.user.id)},
        {"visibility": "private"},
        {"tag": "confidential"},
    ]:
        listed = await client.get("/api/documents", params=params, headers=headers)
        assert secret["id"] not in {d["id"] for d in listed.json()["items"]}, params
    for mode in ("hybrid", "dense", "keyword"):
        found = await client.post(
            "/api/search", json={"query": f"{SECRET_TERM} Zyxcorp", "mode": mode}, headers=headers
        )
        assert found.json()["hits"] == [], mode
    workspaces = (await client.get("/api/workspaces", headers=headers)).json()["items"]
    assert next(w for w in workspaces if w["slug"] == "default")["document_count"] == 0
    # And it is all still there for its owner.
    mine = await client.get(url, headers=owner.bearer)
    assert mine.status_code == 200
    hits = await client.post("/api/search", json={"query": SECRET_TERM}, headers=owner.bearer)
    assert [h["document_id"] for h in hits.json()["hits"]] == [secret["id"]]


async def test_private_documents_change_no_one_elses_search_scores_or_totals(
    client: httpx.AsyncClient, conn: AsyncConnection, owner: Account
) -> None:
    other = await make_account(conn, "viewer")
    public = await client.post(
        "/api/documents",
        json={"title": "Quorum rules", "content": "The quorum is three maintainers."},
        headers=owner.bearer,
    )
    assert public.status_code == 201

    async def observe() -> tuple[Any, ...]:
        search = await client.post(
            "/api/search",
            json={"query": "quorum maintainers", "mode": "keyword"},
            headers=other.bearer,
        )
        hits = [(h["document_id"], h["score"], h["kw_rank"]) for h in search.json()["hits"]]
        listed = await client.get("/api/documents", headers=other.bearer)
        workspaces = await client.get("/api/workspaces", headers=other.bearer)
        counts = {w["slug"]: w["document_count"] for w in workspaces.json()["items"]}
        return hits, len(listed.json()["items"]), counts

    before = await observe()
    for i in range(4):
        reply = await client.post(
            "/api/documents",
            json={
                "title": f"Quorum secret {i}",
                "content": "quorum maintainers " * (i + 2),
                "visibility": "private",
            },
            headers=owner.bearer,
        )
        assert reply.status_code == 201
    assert await observe() == before
