"""A chat's title: renamed with `PATCH /api/chats/{id}`, searched with `GET /api/chats?q=`."""

from __future__ import annotations

from uuid import UUID

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection

from app.asking import records
from app.db.engine import ReadConnection, WriteConnection
from tests import support
from tests.accounts import Account, authorize, make_account


async def _chat(conn: AsyncConnection, account: Account, question: str) -> UUID:
    """A chat of `account` whose one turn asked `question`."""
    write = WriteConnection(ReadConnection(conn))
    principal = await support.key_principal(write, account.key)
    assert principal is not None
    return await records.record_turn(
        write,
        principal,
        None,
        question=question,
        answer="An answer.",
        mode="fast",
        citations=[],
        trace=[],
    )


async def _titles(client: httpx.AsyncClient, **params: str) -> list[str]:
    reply = await client.get("/api/chats", params=params)
    assert reply.status_code == 200, reply.text
    return [chat["title"] for chat in reply.json()["items"]]


async def test_a_renamed_chat_keeps_its_new_title_trimmed_and_its_place(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    account = await authorize(client, conn, "viewer")
    first = await _chat(conn, account, "How do I roll back?")
    await _chat(conn, account, "What is cached?")
    before = await client.get(f"/api/chats/{first}")

    renamed = await client.patch(f"/api/chats/{first}", json={"title": "  Rollbacks  "})

    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["title"] == "Rollbacks"
    after = (await client.get(f"/api/chats/{first}")).json()
    assert after["title"] == "Rollbacks"
    assert after["updated_at"] == before.json()["updated_at"]
    # One transaction has one now(): the list's order is the updated_at kept above.
    assert sorted(await _titles(client)) == ["Rollbacks", "What is cached?"]


async def test_a_bad_title_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    account = await authorize(client, conn, "viewer")
    chat_id = await _chat(conn, account, "How do I roll back?")
    for body in (
        {"title": "   "},
        {"title": "x" * 121},
        {"title": "nul\x00"},
        {"title": None},
        {},
        {"title": "Fine", "pinned": True},
    ):
        reply = await client.patch(f"/api/chats/{chat_id}", json=body)
        assert (reply.status_code, reply.json()["error"]["code"]) == (422, "validation_error")
    assert await _titles(client) == ["How do I roll back?"]


async def test_another_persons_chat_cannot_be_renamed(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    owner = await make_account(conn, "viewer")
    chat_id = await _chat(conn, owner, "Private question")
    await authorize(client, conn, "admin")

    reply = await client.patch(f"/api/chats/{chat_id}", json={"title": "Mine now"})

    assert (reply.status_code, reply.json()["error"]["code"]) == (404, "not_found")
    client.headers.update(owner.bearer)
    assert await _titles(client) == ["Private question"]


async def test_chats_are_searched_by_title_ignoring_case_with_wildcards_taken_literally(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    account = await authorize(client, conn, "viewer")
    for question in ("Deploy rollback steps", "Cache size", "What does 100% mean?", "KEY_ID"):
        await _chat(conn, account, question)
    stranger = await make_account(conn, "viewer")
    await _chat(conn, stranger, "Rollback for strangers")

    assert await _titles(client, q="ROLLBACK") == ["Deploy rollback steps"]
    assert await _titles(client, q="%") == ["What does 100% mean?"]
    assert await _titles(client, q="_") == ["KEY_ID"]
    assert await _titles(client, q="nothing like it") == []
    assert len(await _titles(client, q="")) == 4


async def test_a_title_search_pages_like_the_list(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    account = await authorize(client, conn, "viewer")
    for n in range(3):
        await _chat(conn, account, f"Deploy question {n}")
    await _chat(conn, account, "Unrelated")
    first = (await client.get("/api/chats", params={"q": "deploy", "limit": 2})).json()
    rest = await client.get(
        "/api/chats", params={"q": "deploy", "limit": 2, "cursor": first["next_cursor"]}
    )
    titles = [c["title"] for c in first["items"]] + [c["title"] for c in rest.json()["items"]]
    # Made in one transaction, they share updated_at: the page order is then by id.
    assert sorted(titles) == ["Deploy question 0", "Deploy question 1", "Deploy question 2"]
    assert rest.json()["next_cursor"] is None
