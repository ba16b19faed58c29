"""A chat's deep run goes on without its page (ADR 0030), over real HTTP: closing the stream
leaves it running and its turn lands in the chat; the stop button's cancel stops it, and only
its owner's."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from app.asking import records
from app.asking import service as asking_service
from tests.accounts import Account
from tests.agents.conftest import World
from tests.agents.test_ask_api import Swap, _client, _events
from tests.mcp.research import deep_run
from tests.support import eventually


async def _open_deep_run(
    world: World, account: Account, question: str
) -> tuple[dict[str, Any], list[str]]:
    """Ask a deep question in a new chat, read its `mode` event, and close the page."""
    seen: list[str] = []
    async with (
        _client(world, account) as client,
        client.stream("POST", "/api/ask", json={"question": question, "mode": "deep"}) as response,
    ):
        assert response.status_code == 200
        async for name, data in _events(response):
            seen.append(name)
            if name == "mode":
                return data, seen
    raise AssertionError(f"no mode event: {seen}")


async def _chat(world: World, account: Account, chat_id: str) -> dict[str, Any]:
    async with _client(world, account) as client:
        response = await client.get(f"/api/chats/{chat_id}")
    assert response.status_code == 200, response.text
    chat: dict[str, Any] = response.json()
    return chat


async def test_a_deep_run_outlives_its_page_and_its_turn_lands_in_the_chat(
    world: World, swap_models: Swap
) -> None:
    release, reached = asyncio.Event(), asyncio.Event()
    swap_models(deep_run(release, reached))
    asker = await world.corpus.account("viewer")
    mode, _ = await _open_deep_run(world, asker, "How does a rollback work?")
    assert mode["mode"] == "deep"
    assert mode["run_id"] is not None
    chat_id = mode["chat_id"]
    await asyncio.wait_for(reached.wait(), timeout=30)

    # The page is gone; the chat exists already and says its run is under way.
    chat = await _chat(world, asker, chat_id)
    assert chat["title"] == "How does a rollback work?"
    assert chat["messages"] == []
    assert [(r["id"], r["status"]) for r in chat["runs"]] == [(mode["run_id"], "running")]

    release.set()

    async def landed() -> bool:
        return bool((await _chat(world, asker, chat_id))["messages"])

    await eventually(landed, "the run's turn lands in the chat")
    chat = await _chat(world, asker, chat_id)
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    answer = chat["messages"][1]
    assert answer["content"] == "Roll back with make rollback [1]."
    assert answer["mode"] == "deep"
    assert [c["title"] for c in answer["citations"]] == ["Deploy rollback"]
    assert chat["runs"] == []


async def test_cancel_stops_a_deep_run_and_only_its_owner_may(
    world: World, swap_models: Swap
) -> None:
    release, reached = asyncio.Event(), asyncio.Event()
    swap_models(deep_run(release, reached))
    owner, stranger = await world.corpus.account("viewer"), await world.corpus.account("viewer")
    mode, _ = await _open_deep_run(world, owner, "How does a rollback work?")
    run_id, chat_id = mode["run_id"], mode["chat_id"]
    await asyncio.wait_for(reached.wait(), timeout=30)
    jobs = world.corpus.app.state.resources.jobs

    async with _client(world, stranger) as client:
        refused = await client.post(f"/api/runs/{run_id}/cancel")
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "not_found")
    assert any(str(job) == run_id for job in jobs._tasks)

    async with _client(world, owner) as client:
        cancelled = await client.post(f"/api/runs/{run_id}/cancel")
        again = await client.post(f"/api/runs/{run_id}/cancel")
    assert (cancelled.status_code, again.status_code) == (204, 204)

    async def stopped() -> bool:
        return all(str(job) != run_id for job in jobs._tasks)

    await eventually(stopped, "the run stops")
    release.set()
    chat = await _chat(world, owner, chat_id)
    assert chat["messages"] == []
    assert [(r["status"], r["error"]) for r in chat["runs"]] == [("failed", records.CANCELLED)]


async def test_the_page_that_stays_hears_the_whole_run_and_an_ended_run_stays_as_it_ended(
    world: World, swap_models: Swap
) -> None:
    release = asyncio.Event()
    release.set()
    swap_models(deep_run(release))
    asker = await world.corpus.account("viewer")
    async with (
        _client(world, asker) as client,
        client.stream(
            "POST", "/api/ask", json={"question": "How does a rollback work?", "mode": "deep"}
        ) as response,
    ):
        events = [(name, data) async for name, data in _events(response)]
    names = [name for name, _ in events]
    assert (names[0], names[-1]) == ("mode", "done")
    assert set(names[1:-1]) <= {"step", "token"}
    mode, done = events[0][1], events[-1][1]
    assert done["chat_id"] == mode["chat_id"]
    async with _client(world, asker) as client:
        ended = await client.post(f"/api/runs/{mode['run_id']}/cancel")
        unknown = await client.post(f"/api/runs/{uuid.uuid4()}/cancel")
    assert (ended.status_code, unknown.status_code) == (204, 404)
    chat = await _chat(world, asker, mode["chat_id"])
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert chat["runs"] == []


async def test_a_run_whose_server_died_shows_in_its_chat_as_failed_and_why(world: World) -> None:
    asker = await world.corpus.account("viewer")
    principal = await world.principal(asker)
    async with world.corpus.db.write() as conn:
        chat_id = await records.open_chat(conn, principal, "How does a rollback work?")
        # Leased to a process that stopped renewing it: its lease has run out already.
        await records.create_job(
            conn,
            principal,
            "How does a rollback work?",
            worker="gone:1",
            lease_s=-1,
            chat_id=chat_id,
        )
    chat = await _chat(world, asker, str(chat_id))
    assert [(r["status"], r["error"]) for r in chat["runs"]] == [
        ("failed", asking_service.RUN_ABANDONED)
    ]
    async with world.corpus.db.write() as conn:
        assert await records.fail_abandoned_jobs(conn) >= 1
    chat = await _chat(world, asker, str(chat_id))
    assert [(r["status"], r["error"]) for r in chat["runs"]] == [
        ("failed", asking_service.RUN_ABANDONED)
    ]
