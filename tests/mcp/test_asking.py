"""Asking over MCP with the SDK's real client: `ask_docs` answers with citations, and a deep run
that outlasts its call becomes a job in PostgreSQL that any server process answers, to its owner
only; a job whose process died is marked failed with a reason."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from app.access.principal import Principal
from app.asking import jobs, records
from app.asking import service as asking_service
from app.config import Settings
from app.housekeeping import prune_expired
from tests import support
from tests.accounts import Account
from tests.agents.scripted import calling, in_order, scripted, tool_call
from tests.mcp.conftest import mcp_client
from tests.mcp.research import add_runbook, deep_run, fast_run, swap
from tests.mcp.test_tools import _code, _ok
from tests.running import Running, run_fresh_corpus
from tests.support import (
    TEST_SECRET,
    child_env,
    eventually,
    free_port,
    start_corpus,
    wait_until_ready,
)


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    # deep_research gives up waiting after half a second, so a held run becomes a job.
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_asking", research_wait_s=0.5
    ) as running:
        await add_runbook(running)
        yield running


async def test_ask_docs_answers_with_citations(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    original = swap(corpus, fast_run())
    try:
        async with mcp_client(corpus.mcp_url, viewer.key) as client:
            answer = _ok(await client.call_tool("ask_docs", {"question": "How to roll back?"}))
    finally:
        corpus.app.state.resources = original
    assert answer["answer"] == "Run make rollback [1]."
    assert (answer["mode"], answer["extractive"]) == ("fast", False)
    assert [c["title"] for c in answer["citations"]] == ["Deploy rollback"]
    # Absolute: an agent reads it outside the web app.
    assert answer["citations"][0]["url"].startswith(f"{corpus.url}/documents/")
    assert answer["steps"] == ['search: "roll back a deploy"']


@pytest.mark.parametrize(
    ("mode", "revision"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")]
)
async def test_each_revision_searches_asks_and_researches_to_a_job_it_collects(
    corpus: Running, mode: str, revision: str
) -> None:
    # The SDK's client speaks 2025-11-25 with its handshake, or 2026-07-28 stateless; the door
    # answers both alike, and a client that does not declare the tasks extension keeps a
    # job_id with research_result (the extension: tests/mcp/test_tasks.py).
    viewer = await corpus.account("viewer")
    release = asyncio.Event()
    async with mcp_client(corpus.mcp_url, viewer.key, mode=mode) as client:
        assert client.protocol_version == revision
        found = _ok(await client.call_tool("search_docs", {"query": "roll back a deploy"}))
        assert found["hits"][0]["title"] == "Deploy rollback"
        refused = await client.call_tool("search_docs", {"query": ""})
        assert refused.is_error is True

        original = swap(corpus, fast_run())
        try:
            answer = _ok(await client.call_tool("ask_docs", {"question": "How to roll back?"}))
        finally:
            corpus.app.state.resources = original
        assert answer["answer"] == "Run make rollback [1]."

        original = swap(corpus, deep_run(release))
        try:
            started = _ok(await client.call_tool("deep_research", {"question": "Rollbacks?"}))
            assert started["status"] == "running"
            release.set()

            async def done() -> bool:
                result = _ok(
                    await client.call_tool("research_result", {"job_id": started["job_id"]})
                )
                return bool(result["status"] == "done")

            await eventually(done, "the research job finishes")
        finally:
            corpus.app.state.resources = original


async def test_a_slow_deep_research_is_a_job_a_second_server_process_answers_to_its_owner_only(
    corpus: Running, tmp_path: Path
) -> None:
    owner, stranger = await corpus.account("viewer"), await corpus.account("viewer")
    release = asyncio.Event()
    original = swap(corpus, deep_run(release))
    try:
        async with mcp_client(corpus.mcp_url, owner.key) as client:
            started = _ok(await client.call_tool("deep_research", {"question": "Rollbacks?"}))
        assert started["status"] == "running"
        job_id = started["job_id"]
        assert job_id
        release.set()
        principal = await _principal(corpus, owner)

        async def finished() -> bool:
            async with corpus.db.write() as conn:
                job = await asking_service.get_job(conn, principal, uuid.UUID(job_id))
            return job.status != "running"

        await eventually(finished, "the job finishes")
    finally:
        corpus.app.state.resources = original

    port = free_port()
    log = tmp_path / "second.log"
    env = child_env(
        DATABASE_URL=corpus.settings.database_url,
        CORPUS_DATA_DIR=str(tmp_path / "var"),
        EMBEDDINGS_PROVIDER="hash",
        SECRET_KEY=TEST_SECRET,
        CORPUS_PUBLIC_URL=corpus.url,
        CORPUS_ALLOWED_HOSTS=f"127.0.0.1:{port}",
    )
    second = start_corpus(["serve", "--port", str(port)], env, log)
    try:
        url = f"http://127.0.0.1:{port}"
        await asyncio.to_thread(wait_until_ready, f"{url}/readyz", second, log)
        async with mcp_client(f"{url}/mcp", owner.key) as client:
            result = _ok(await client.call_tool("research_result", {"job_id": job_id}))
        async with mcp_client(f"{url}/mcp", stranger.key) as client:
            refused = await client.call_tool("research_result", {"job_id": job_id})
    finally:
        second.terminate()
        await asyncio.to_thread(second.wait, 30)
    assert (result["status"], result["mode"], result["job_id"]) == ("done", "deep", job_id)
    assert result["answer"] == "Roll back with make rollback [1]."
    assert [c["title"] for c in result["citations"]] == ["Deploy rollback"]
    assert _code(refused) == "not_found"


async def _principal(corpus: Running, account: Account) -> Principal:
    async with corpus.db.write() as conn:
        principal = await support.key_principal(conn, account.key)
    assert principal is not None
    return principal


async def test_a_job_whose_process_died_is_marked_failed_with_a_reason(corpus: Running) -> None:
    owner = await corpus.account("viewer")
    principal = await _principal(corpus, owner)
    async with corpus.db.write() as conn:
        # A job leased to a process that never renews it: its lease has already run out.
        dead = await records.create_job(conn, principal, "Rollbacks?", worker="gone:1", lease_s=-1)
        orphan = await records.create_job(conn, principal, "Retries?", worker="gone:1", lease_s=-1)
    async with mcp_client(corpus.mcp_url, owner.key) as client:
        result = _ok(await client.call_tool("research_result", {"job_id": str(dead)}))
    assert result["status"] == "failed"
    assert result["answer"] == records.ABANDONED
    # Housekeeping marks the others, read or not.
    counts = await prune_expired(corpus.db)
    assert counts["abandoned research jobs"] >= 1
    async with corpus.db.write() as conn:
        job = await asking_service.get_job(conn, principal, orphan)
    assert (job.status, job.error) == ("failed", records.ABANDONED)


async def test_a_server_that_shuts_down_marks_its_running_jobs_failed(corpus: Running) -> None:
    owner = await corpus.account("viewer")
    original = swap(corpus, deep_run(asyncio.Event()))  # never released
    try:
        async with mcp_client(corpus.mcp_url, owner.key) as client:
            started = _ok(await client.call_tool("deep_research", {"question": "Rollbacks?"}))
        # What the lifespan does as the server stops.
        await corpus.app.state.resources.jobs.aclose()
    finally:
        corpus.app.state.resources = original
    async with corpus.db.write() as conn:
        job = await asking_service.get_job(
            conn, await _principal(corpus, owner), uuid.UUID(started["job_id"])
        )
    assert (job.status, job.error) == ("failed", jobs.SHUT_DOWN)


async def test_ask_docs_is_read_only_so_an_editors_run_saves_no_note(corpus: Running) -> None:
    editor = await corpus.account("editor")
    models = scripted(
        in_order(
            calling(tool_call("save_note", title="Sneaky note", content="Saved over MCP.")),
            calling(text="Nothing saved."),
        )
    )
    original = swap(corpus, models)
    try:
        async with mcp_client(corpus.mcp_url, editor.key) as client:
            answer = _ok(await client.call_tool("ask_docs", {"question": "Save a note"}))
            listed = _ok(await client.call_tool("list_documents", {"q": "Sneaky note"}))
    finally:
        corpus.app.state.resources = original
    assert "save_note" not in models.model.calls[0].tools
    assert "save_note: not a tool of this agent or of your role" in answer["steps"]
    assert listed["items"] == []


async def test_a_running_job_renews_its_lease_past_its_first_expiry(corpus: Running) -> None:
    owner = await corpus.account("viewer")
    release = asyncio.Event()
    original = corpus.app.state.resources
    corpus.app.state.resources = dataclasses.replace(
        original,
        models=deep_run(release),
        settings=original.settings.model_copy(update={"research_lease_s": 1.0}),
    )
    try:
        async with mcp_client(corpus.mcp_url, owner.key) as client:
            started = _ok(await client.call_tool("deep_research", {"question": "Rollbacks?"}))
        job_id = uuid.UUID(started["job_id"])
        principal = await _principal(corpus, owner)

        async def renewed_past_its_first_lease() -> bool:
            async with corpus.db.read() as conn:
                row = (
                    await conn.execute(
                        text(
                            "SELECT heartbeat_at > created_at + interval '1.5 seconds' "
                            "FROM research_jobs WHERE id = :id"
                        ),
                        {"id": job_id},
                    )
                ).scalar_one()
            return bool(row)

        await eventually(renewed_past_its_first_lease, "the lease is renewed", within_s=10)
        # Read by anyone after its first lease ran out, the job is still running.
        async with corpus.db.write() as conn:
            assert (await asking_service.get_job(conn, principal, job_id)).status == "running"
        release.set()

        async def done() -> bool:
            async with corpus.db.write() as conn:
                return (await asking_service.get_job(conn, principal, job_id)).status == "done"

        await eventually(done, "the job finishes")
    finally:
        corpus.app.state.resources = original
