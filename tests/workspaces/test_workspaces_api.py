"""Workspaces over HTTP: created, listed and changed by an admin; bad input refused."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import authorize, make_account


@pytest.fixture(autouse=True)
async def _as_admin(client: httpx.AsyncClient, conn: AsyncConnection) -> None:
    """These tests act as an admin with an API key."""
    await authorize(client, conn, "admin")


async def test_workspaces_are_created_listed_and_updated(client: httpx.AsyncClient) -> None:
    created = await client.post(
        "/api/workspaces",
        json={"slug": "platform", "title": "Platform", "license": "Apache-2.0", "tier": "core"},
    )
    assert created.status_code == 201
    assert created.json()["license"] == "Apache-2.0"
    duplicate = await client.post("/api/workspaces", json={"slug": "platform", "title": "Again"})
    assert duplicate.status_code == 409
    updated = await client.patch("/api/workspaces/platform", json={"license": None})
    assert updated.json()["license"] is None
    slugs = [w["slug"] for w in (await client.get("/api/workspaces")).json()["items"]]
    assert {"default", "platform"} <= set(slugs)


@pytest.mark.parametrize(
    "body",
    [
        {"slug": "A", "title": "x"},
        {"slug": "ok-slug", "title": "x", "tier": "gold"},
        {"slug": "ok-slug", "title": "x", "license": "not a license!"},
        {"slug": "ok-slug", "title": "x", "colour": "red"},
    ],
)
async def test_bad_workspaces_are_refused(
    client: httpx.AsyncClient, body: dict[str, object]
) -> None:
    response = await client.post("/api/workspaces", json=body)
    assert response.status_code == 422


async def test_updating_an_unknown_workspace_is_a_404(client: httpx.AsyncClient) -> None:
    response = await client.patch("/api/workspaces/nowhere", json={"title": "x"})
    assert response.status_code == 404


@pytest.mark.parametrize("body", [{"title": None}, {"tier": None}, {"description": None}])
async def test_a_workspace_field_that_cannot_be_empty_refuses_null(
    client: httpx.AsyncClient, body: dict[str, object]
) -> None:
    before = (await client.get("/api/workspaces")).json()["items"]
    response = await client.patch("/api/workspaces/default", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert (await client.get("/api/workspaces")).json()["items"] == before


async def test_an_empty_workspace_is_deleted_and_audited(client: httpx.AsyncClient) -> None:
    await client.post("/api/workspaces", json={"slug": "scratch", "title": "Scratch"})
    renamed = await client.patch("/api/workspaces/scratch", json={"title": "Scratch pad"})
    assert renamed.status_code == 200
    deleted = await client.delete("/api/workspaces/scratch")
    assert deleted.status_code == 204
    slugs = [w["slug"] for w in (await client.get("/api/workspaces")).json()["items"]]
    assert "scratch" not in slugs
    entries = (await client.get("/api/audit", params={"target": "scratch"})).json()["items"]
    by_action = {e["action"]: e for e in entries}
    assert set(by_action) == {"workspace.create", "workspace.update", "workspace.delete"}
    assert by_action["workspace.update"]["before"] == {"title": "Scratch"}
    assert by_action["workspace.update"]["after"] == {"title": "Scratch pad"}
    assert by_action["workspace.delete"]["before"]["title"] == "Scratch pad"
    again = await client.delete("/api/workspaces/scratch")
    assert again.status_code == 404


async def test_a_workspace_with_documents_or_keys_is_not_deleted(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await client.post("/api/workspaces", json={"slug": "full", "title": "Full"})
    await client.post("/api/workspaces", json={"slug": "keyed", "title": "Keyed"})
    document = await client.post(
        "/api/documents", json={"title": "T", "content": "Words.", "workspace": "full"}
    )
    assert document.status_code == 201
    bot = await make_account(conn, "viewer")
    key = await client.post(
        "/api/keys", json={"user_id": str(bot.user.id), "name": "bound", "workspace": "keyed"}
    )
    assert key.status_code == 201
    for slug in ("full", "keyed", "default"):
        refused = await client.delete(f"/api/workspaces/{slug}")
        assert refused.status_code == 409, slug
        assert refused.json()["error"]["code"] == "conflict"
    slugs = {w["slug"] for w in (await client.get("/api/workspaces")).json()["items"]}
    assert {"full", "keyed", "default"} <= slugs
    await client.delete(f"/api/keys/{key.json()['id']}")
    assert (await client.delete("/api/workspaces/keyed")).status_code == 204
