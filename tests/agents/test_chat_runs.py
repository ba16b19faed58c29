"""A chat's deep run goes on without its page (ADR 0030), over real HTTP: closing the stream
leaves it running and its turn lands in the chat; the stop button's cancel stops it, and only
its owner's."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy import text

from app.asking import records
from app.asking import service as asking_service
from tests.accounts import Account
from tests.agents.conftest import World
from tests.agents.test_ask_api import Swap, _client, _events
from tests.mcp.research import deep_run
from tests.support import eventually, waiting_on_locks


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


async def _held_deep_run(
    world: World, swap_models: Swap
) -> tuple[asyncio.Event, Account, dict[str, Any]]:
    """A viewer's deep run in a new chat, its page closed, held at its first model call until
    the returned event is set; the asker, and the run's `mode` event."""
    release, reached = asyncio.Event(), asyncio.Event()
    swap_models(deep_run(release, reached))
    asker = await world.corpus.account("viewer")
    mode, _ = await _open_deep_run(world, asker, "How does a rollback work?")
    await asyncio.wait_for(reached.wait(), timeout=30)
    return release, asker, mode


async def _landed(world: World, account: Account, chat_id: str) -> dict[str, Any]:
    """The chat once its run's turn has landed in it."""
    landed: dict[str, Any] = {}

    async def turn() -> bool:
        landed.update(await _chat(world, account, chat_id))
        return bool(landed["messages"])

    await eventually(turn, "the run's turn lands in the chat")
    return landed


async def test_a_deep_run_outlives_its_page_and_its_turn_lands_in_the_chat(
    world: World, swap_models: Swap
) -> None:
    release, asker, mode = await _held_deep_run(world, swap_models)
    assert mode["mode"] == "deep"
    assert mode["run_id"] is not None
    chat_id = mode["chat_id"]

    # The page is gone; the chat exists already and says its run is under way.
    chat = await _chat(world, asker, chat_id)
    assert chat["title"] == "How does a rollback work?"
    assert chat["messages"] == []
    assert [(r["id"], r["status"]) for r in chat["runs"]] == [(mode["run_id"], "running")]

    release.set()

    chat = await _landed(world, asker, chat_id)
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    answer = chat["messages"][1]
    assert answer["content"] == "Roll back with make rollback [1]."
    assert answer["mode"] == "deep"
    assert [c["title"] for c in answer["citations"]] == ["Deploy rollback"]
    assert chat["runs"] == []


async def test_cancel_stops_a_deep_run_and_only_its_owner_may(
    world: World, swap_models: Swap
) -> None:
    release, owner, mode = await _held_deep_run(world, swap_models)
    stranger = await world.corpus.account("viewer")
    run_id, chat_id = mode["run_id"], mode["chat_id"]
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


async def _waits_on_the_job_row(world: World) -> bool:
    """Whether a session waits for the lock on a research job's row."""
    async with world.corpus.db.read() as conn:
        return await waiting_on_locks(conn, in_statements_on="research_jobs") >= 1


async def test_a_runs_turn_and_its_end_are_one_commit(world: World, swap_models: Swap) -> None:
    # A reader of the chat finds the run under way or its turn, never both: the page would
    # show the answer under a "still researching" it has outlived.
    release, asker, mode = await _held_deep_run(world, swap_models)
    chat_id = mode["chat_id"]
    async with world.corpus.db.write() as conn:
        # Hold the job's row: the run's answer waits for it, with whatever it wrote before.
        await conn.execute(
            text("SELECT 1 FROM research_jobs WHERE id = :id FOR UPDATE"), {"id": mode["run_id"]}
        )
        release.set()
        await eventually(lambda: _waits_on_the_job_row(world), "the run waits for the job's row")
        chat = await _chat(world, asker, chat_id)
        assert chat["messages"] == []
        assert [r["status"] for r in chat["runs"]] == ["running"]

    chat = await _landed(world, asker, chat_id)
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert chat["runs"] == []


async def test_a_run_stopped_elsewhere_as_its_answer_lands_keeps_no_turn(
    world: World, swap_models: Swap
) -> None:
    # Cancelled through another replica while its answer was being kept: the cancel wins, the
    # turn is not kept, and the chat says the run was cancelled.
    release, asker, mode = await _held_deep_run(world, swap_models)
    run_id, chat_id = mode["run_id"], mode["chat_id"]
    jobs = world.corpus.app.state.resources.jobs
    async with world.corpus.db.write() as conn:
        await conn.execute(
            text("SELECT 1 FROM research_jobs WHERE id = :id FOR UPDATE"), {"id": run_id}
        )
        release.set()
        await eventually(lambda: _waits_on_the_job_row(world), "the run waits for the job's row")
        await records.cancel_job(conn, uuid.UUID(run_id))

    async def ended() -> bool:
        return all(str(job) != run_id for job in jobs._tasks)

    await eventually(ended, "the run ends")
    chat = await _chat(world, asker, chat_id)
    assert chat["messages"] == []
    assert [(r["status"], r["error"]) for r in chat["runs"]] == [("failed", records.CANCELLED)]
