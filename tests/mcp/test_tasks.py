"""Deep research as an MCP task. On 2026-07-28 (the tasks extension,
`io.modelcontextprotocol/tasks`) with the SDK's real client: a client that declares the
extension gets a task handle at once, polls `tasks/get` until the answer is inlined, and
`tasks/cancel` stops a run. On 2025-11-25 (that revision's own tasks, which the SDK's client
does not speak: by hand over HTTP, and with the TypeScript SDK's tasks client in
frontend/e2e/mcp-client.test.mjs): a `tools/call` that asks for a task gets one, `tasks/result`
waits for the answer, `tasks/cancel` stops the run. A client that asks for no task keeps
`job_id` with `research_result` (tests/mcp/test_asking.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult
from mcp_types import Request, RequestParams, Result
from pydantic import ConfigDict
from sqlalchemy import text

from app.asking import records
from app.config import Settings
from tests.mcp.conftest import mcp_client
from tests.mcp.research import add_runbook, deep_run, swap
from tests.running import Running, run_fresh_corpus
from tests.support import eventually

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


class TaskId(RequestParams):
    task_id: str


class GetTask(Request[TaskId, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskId
    name_param = "taskId"


class CancelTask(Request[TaskId, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskId
    name_param = "taskId"


class TaskHandle(Result):
    """A `CreateTaskResult` (`resultType: "task"`), or a task as `tasks/get` details it."""

    model_config = ConfigDict(extra="allow")

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    poll_interval_ms: int | None = None


class DetailedTask(Result):
    model_config = ConfigDict(extra="allow")

    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None


class Tasks(ClientExtension):
    """The client's side of the extension: declares it, and finishes a task handle by polling
    `tasks/get` until the task ends (what `call_tool` then returns)."""

    identifier = TASKS

    def __init__(self) -> None:
        self.handles: list[TaskHandle] = []

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve)]

    async def _resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        self.handles.append(handle)

        seen: list[DetailedTask] = []

        async def ended() -> bool:
            task = await ctx.session.send_request(
                GetTask(params=TaskId(task_id=handle.task_id)), DetailedTask
            )
            seen.append(task)
            return task.status in TERMINAL

        await eventually(ended, "the task ends")
        assert seen[-1].status == "completed", seen[-1]
        return CallToolResult.model_validate(seen[-1].result)


@asynccontextmanager
async def task_client(url: str, bearer: str, tasks: Tasks) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"})
    async with (
        http,
        Client(streamable_http_client(url, http_client=http), extensions=[tasks]) as client,
    ):
        yield client


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    # A client without the extension would wait half a second before its job_id; a lease of
    # three seconds is renewed every second (where a cancel on another replica is noticed).
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_tasks", research_wait_s=0.5, research_lease_s=3
    ) as running:
        await add_runbook(running)
        yield running


@asynccontextmanager
async def swapped(corpus: Running, models: Any) -> AsyncIterator[None]:
    original = swap(corpus, models)
    try:
        yield
    finally:
        corpus.app.state.resources = original


async def test_a_declaring_client_gets_a_task_it_polls_to_the_answer(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    release = asyncio.Event()
    tasks = Tasks()
    async with (
        swapped(corpus, deep_run(release)),
        task_client(corpus.mcp_url, viewer.key, tasks) as client,
    ):
        assert TASKS in (client.server_capabilities.extensions or {})
        release.set()
        result = await client.call_tool("deep_research", {"question": "Rollbacks?"})
    [handle] = tasks.handles
    assert handle.status == "working"
    assert result.is_error is False
    answer = result.structured_content or {}
    assert (answer["status"], answer["job_id"]) == ("done", handle.task_id)
    assert answer["answer"] == "Roll back with make rollback [1]."
    assert [c["title"] for c in answer["citations"]] == ["Deploy rollback"]
    # Absolute, as the tool's own answer: an agent reads it outside the web app.
    assert answer["citations"][0]["url"].startswith(f"{corpus.url}/documents/")


async def test_cancelling_a_task_stops_its_run(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    release, reached = asyncio.Event(), asyncio.Event()
    tasks = Tasks()
    async with (
        swapped(corpus, deep_run(release, reached)),
        task_client(corpus.mcp_url, viewer.key, tasks) as client,
    ):
        started = await client.session.call_tool(
            "deep_research", {"question": "Rollbacks?"}, allow_claimed=True
        )
        assert isinstance(started, TaskHandle)
        await reached.wait()  # the run is at its model call
        ack = await client.session.send_request(
            CancelTask(params=TaskId(task_id=started.task_id)), Result
        )
        assert ack is not None
        task = await client.session.send_request(
            GetTask(params=TaskId(task_id=started.task_id)), DetailedTask
        )
        assert task.status == "cancelled"
        jobs = corpus.app.state.resources.jobs

        async def stopped() -> bool:
            return uuid.UUID(started.task_id) not in jobs._tasks

        await eventually(stopped, "the run stops")
        release.set()
    async with corpus.db.read() as conn:
        row = (
            await conn.execute(
                text("SELECT status, error, result FROM research_jobs WHERE id = :id"),
                {"id": started.task_id},
            )
        ).one()
    assert tuple(row) == ("failed", records.CANCELLED, None)


async def test_a_task_is_its_owners_and_needs_the_extension_declared(corpus: Running) -> None:
    owner, stranger = await corpus.account("viewer"), await corpus.account("viewer")
    release = asyncio.Event()
    async with (
        swapped(corpus, deep_run(release)),
        task_client(corpus.mcp_url, owner.key, Tasks()) as client,
    ):
        started = await client.session.call_tool(
            "deep_research", {"question": "Rollbacks?"}, allow_claimed=True
        )
        assert isinstance(started, TaskHandle)
        async with task_client(corpus.mcp_url, stranger.key, Tasks()) as other:
            with pytest.raises(MCPError) as unknown:
                await other.session.send_request(
                    GetTask(params=TaskId(task_id=started.task_id)), DetailedTask
                )
        assert unknown.value.error.code == -32602
        async with mcp_client(corpus.mcp_url, owner.key) as plain:
            with pytest.raises(MCPError) as undeclared:
                await plain.session.send_request(
                    GetTask(params=TaskId(task_id=started.task_id)), DetailedTask
                )
        assert undeclared.value.error.code == -32021
        release.set()


async def test_a_run_cancelled_through_another_replica_stops_at_its_next_renewal(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    release, reached = asyncio.Event(), asyncio.Event()
    async with (
        swapped(corpus, deep_run(release, reached)),
        task_client(corpus.mcp_url, viewer.key, Tasks()) as client,
    ):
        started = await client.session.call_tool(
            "deep_research", {"question": "Rollbacks?"}, allow_claimed=True
        )
        assert isinstance(started, TaskHandle)
        await reached.wait()
        # What another replica's tasks/cancel writes: the row, not this process's run.
        async with corpus.db.write() as conn:
            await records.cancel_job(conn, uuid.UUID(started.task_id))
        jobs = corpus.app.state.resources.jobs

        async def stopped() -> bool:
            return uuid.UUID(started.task_id) not in jobs._tasks

        await eventually(stopped, "the run stops at its lease renewal")
        release.set()


LEGACY = "2025-11-25"


async def _legacy(corpus: Running, key: str, method: str, params: dict[str, Any]) -> Any:
    """One 2025-11-25 request by hand (the door is stateless: no session to open first); its
    JSON-RPC reply."""
    async with httpx.AsyncClient() as http:
        reply = await http.post(
            corpus.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers={
                "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": LEGACY,
            },
        )
    assert reply.status_code == 200, reply.text
    return reply.json()


def _initialize(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "0"},
    }


async def test_a_2025_11_25_call_that_asks_for_a_task_gets_one_whose_result_waits_for_the_end(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    offered = await _legacy(corpus, viewer.key, "initialize", _initialize(LEGACY))
    assert offered["result"]["capabilities"]["tasks"] == {
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    # The revision before had no tasks: nothing is offered there.
    older = await _legacy(corpus, viewer.key, "initialize", _initialize("2025-06-18"))
    assert "tasks" not in older["result"]["capabilities"]
    listed = await _legacy(corpus, viewer.key, "tools/list", {})
    execution = {t["name"]: t.get("execution") for t in listed["result"]["tools"]}
    assert execution["deep_research"] == {"taskSupport": "optional"}
    assert execution["search_docs"] is None

    release = asyncio.Event()
    async with swapped(corpus, deep_run(release)):
        asked = {"name": "deep_research", "arguments": {"question": "Rollbacks?"}, "task": {}}
        created = (await _legacy(corpus, viewer.key, "tools/call", asked))["result"]
        task_id = created["task"]["taskId"]
        assert (created["task"]["status"], created["task"]["ttl"]) == ("working", None)
        got = await _legacy(corpus, viewer.key, "tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "working"
        waiting = asyncio.create_task(
            _legacy(corpus, viewer.key, "tasks/result", {"taskId": task_id})
        )
        release.set()
        result = (await waiting)["result"]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    answer = result["structuredContent"]
    assert (answer["status"], answer["job_id"]) == ("done", task_id)
    assert answer["citations"][0]["url"].startswith(f"{corpus.url}/documents/")
    done = await _legacy(corpus, viewer.key, "tasks/get", {"taskId": task_id})
    assert done["result"]["status"] == "completed"


async def test_a_2025_11_25_task_is_its_owners_and_cancelling_it_stops_its_run_once(
    corpus: Running,
) -> None:
    owner, stranger = await corpus.account("viewer"), await corpus.account("viewer")
    release, reached = asyncio.Event(), asyncio.Event()
    async with swapped(corpus, deep_run(release, reached)):
        asked = {"name": "deep_research", "arguments": {"question": "Rollbacks?"}, "task": {}}
        task_id = (await _legacy(corpus, owner.key, "tools/call", asked))["result"]["task"][
            "taskId"
        ]
        await reached.wait()
        foreign = await _legacy(corpus, stranger.key, "tasks/cancel", {"taskId": task_id})
        assert foreign["error"]["code"] == -32602
        cancelled = await _legacy(corpus, owner.key, "tasks/cancel", {"taskId": task_id})
        assert cancelled["result"]["status"] == "cancelled"
        jobs = corpus.app.state.resources.jobs

        async def stopped() -> bool:
            return uuid.UUID(task_id) not in jobs._tasks

        await eventually(stopped, "the run stops")
        release.set()
    again = await _legacy(corpus, owner.key, "tasks/cancel", {"taskId": task_id})
    assert again["error"]["code"] == -32602
    result = await _legacy(corpus, owner.key, "tasks/result", {"taskId": task_id})
    assert result["error"]["code"] == -32602
    missing = await _legacy(corpus, owner.key, "tasks/get", {"taskId": str(uuid.uuid4())})
    assert missing["error"]["code"] == -32602
