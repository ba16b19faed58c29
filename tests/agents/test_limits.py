"""Limits on answering over real HTTP and MCP (docs/SECURITY.md, "Limits on answering"): one
person's flood of asks is refused past their runs while another person is answered, the
process's model calls go round people fairly, a run gives its slot back however it ends, and
research jobs queue behind a person's running ones, then are refused."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.asking.limits import AnswerLimits
from app.config import Settings
from tests.accounts import Account
from tests.agents.scripted import Call, Reply, calling, scripted
from tests.agents.test_ask_api import _events
from tests.mcp.conftest import mcp_client
from tests.mcp.research import deep_run
from tests.mcp.test_tools import _code, _ok
from tests.running import Running, run_fresh_corpus
from tests.support import eventually

RUNS, JOBS, QUEUED, MODEL_CALLS = 3, 1, 2, 2


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    # Small limits, so that a few held streams reach them; deep_research returns at once.
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_limits",
        max_runs_per_person=RUNS,
        max_jobs_per_person=JOBS,
        max_queued_jobs_per_person=QUEUED,
        max_concurrent_model_calls=MODEL_CALLS,
        research_wait_s=0,
    ) as running:
        yield running


@pytest.fixture
def models(corpus: Running) -> Iterator[Held]:
    """The running app's model for one test: each question's answer is held until let go."""
    held = Held()
    original = corpus.app.state.resources
    corpus.app.state.resources = dataclasses.replace(original, models=scripted(held.respond))
    try:
        yield held
    finally:
        held.let_everything_go()
        corpus.app.state.resources = original


@dataclass
class Held:
    """A scripted model that answers each question once the test lets it go, and records the
    order in which questions reached it."""

    reached: list[str] = field(default_factory=list)
    asked: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )
    go: defaultdict[str, asyncio.Event] = field(default_factory=lambda: defaultdict(asyncio.Event))
    fail: set[str] = field(default_factory=set)
    everything_goes: bool = False

    async def respond(self, call: Call) -> Reply:
        question = str(call.messages[-1].content)
        self.reached.append(question)
        self.asked[question].set()
        if not self.everything_goes:
            await self.go[question].wait()
        if question in self.fail:
            return RuntimeError("the model broke")
        return calling(text=f"Answer to {question}.")

    def let_everything_go(self) -> None:
        self.everything_goes = True
        for event in self.go.values():
            event.set()

    async def reaches(self, question: str) -> None:
        await asyncio.wait_for(self.asked[question].wait(), timeout=10)


@dataclass
class Asked:
    status: int
    retry_after: str | None = None
    code: str | None = None
    events: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> tuple[str, Any]:
        return self.events[-1]


def _client(corpus: Running, account: Account) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=corpus.url, headers=account.bearer, timeout=30)


async def _open(
    streams: AsyncExitStack, client: httpx.AsyncClient, question: str
) -> httpx.Response:
    """A question's answer, open once its status has come: its run is then held, or refused."""
    body = {"question": question, "mode": "fast"}
    return await streams.enter_async_context(client.stream("POST", "/api/ask", json=body))


async def _read(response: httpx.Response) -> Asked:
    if response.status_code != 200:
        await response.aread()
        code = response.json()["error"]["code"]
        return Asked(response.status_code, response.headers.get("retry-after"), code)
    return Asked(200, events=[event async for event in _events(response)])


async def _ask(client: httpx.AsyncClient, question: str) -> Asked:
    async with AsyncExitStack() as streams:
        return await _read(await _open(streams, client, question))


def _limits(corpus: Running) -> AnswerLimits:
    limits = corpus.app.state.resources.limits
    assert isinstance(limits, AnswerLimits)
    return limits


async def test_a_flooding_caller_gets_429_while_another_person_is_answered_first(
    corpus: Running, models: Held
) -> None:
    flooder, other = await corpus.account("viewer"), await corpus.account("viewer")
    flooder_id, other_id = flooder.user.id, other.user.id
    async with (
        _client(corpus, flooder) as flooding,
        _client(corpus, other) as client,
        AsyncExitStack() as streams,
    ):
        # The flooder's three runs: two hold the process's two model slots, one waits.
        held = []
        for n in range(RUNS):
            held.append(await _open(streams, flooding, f"flood {n}"))
            if n < MODEL_CALLS:
                await models.reaches(f"flood {n}")
        assert [response.status_code for response in held] == [200] * RUNS

        # Past the flooder's runs: refused at once, at both doors.
        refused = [await _read(await _open(streams, flooding, f"flood {n}")) for n in (4, 5)]
        assert [(r.status, r.code) for r in refused] == [(429, "rate_limited")] * 2
        assert all(r.retry_after is not None and int(r.retry_after) > 0 for r in refused)
        async with mcp_client(corpus.mcp_url, flooder.key) as mcp:
            over_mcp = await mcp.call_tool("ask_docs", {"question": "flood 6"})
        assert _code(over_mcp) == "rate_limited"

        # The other person's one call waits behind the flooder's waiting one, and is served
        # first: the flooder holds a slot, the other person none.
        gate = _limits(corpus).model_calls

        async def third_waits() -> bool:
            return (gate.held(flooder_id), gate.waiting(flooder_id)) == (MODEL_CALLS, 1)

        await eventually(third_waits, "the flooder's third call waits for a model slot")
        models.go["other"].set()
        theirs = asyncio.create_task(_ask(client, "other"))

        async def other_waits() -> bool:
            return gate.waiting(other_id) == 1

        await eventually(other_waits, "the other person's call waits for a model slot")
        models.go["flood 0"].set()
        answered = await theirs
        assert (answered.status, answered.last[0]) == (200, "done")
        assert answered.last[1]["answer"] == "Answer to other."
        assert models.reached[:3] == ["flood 0", "flood 1", "other"]
        # Meanwhile the flooder's other two are held at the model.
        assert (gate.held(flooder_id), gate.waiting(flooder_id)) == (MODEL_CALLS, 0)
        assert gate.held(other_id) == 0

        for n in range(RUNS):
            models.go[f"flood {n}"].set()
        assert [(await _read(response)).last[0] for response in held] == ["done"] * RUNS

        async def flood_over() -> bool:
            return _limits(corpus).runs(flooder_id) == 0

        await eventually(flood_over, "the flooder's runs are given back")
        models.go["again"].set()
        again = await _ask(flooding, "again")
    assert (again.status, again.last[0]) == (200, "done")


async def test_a_run_is_given_back_when_its_stream_ends_fails_or_its_client_leaves(
    corpus: Running, models: Held
) -> None:
    asker = await corpus.account("viewer")
    asker_id = asker.user.id

    async def runs_are(count: int) -> None:
        async def holds() -> bool:
            return _limits(corpus).runs(asker_id) == count

        await eventually(holds, f"{count} runs under way")

    async with _client(corpus, asker) as client, AsyncExitStack() as streams:
        held = []
        for n in range(RUNS):
            held.append(await _open(streams, client, f"held {n}"))
            if n < MODEL_CALLS:
                await models.reaches(f"held {n}")
        assert (await _read(await _open(streams, client, "one too many"))).status == 429
        assert _limits(corpus).runs(asker_id) == RUNS

        # A client that leaves: its run is cancelled, and its run and model slot come back.
        await held[0].aclose()
        await runs_are(RUNS - 1)
        await models.reaches(f"held {RUNS - 1}")

        # A run that ends gives its slot back.
        models.go["held 1"].set()
        assert (await _read(held[1])).last[0] == "done"
        await runs_are(RUNS - 2)

        # So does a run that fails (an error event).
        models.fail.add("broken")
        models.go["broken"].set()
        broken = await _ask(client, "broken")
        assert (broken.status, broken.last[0]) == (200, "error")
        await runs_are(RUNS - 2)

        models.go["after"].set()
        after = await _ask(client, "after")
        assert (after.status, after.last[0]) == (200, "done")
        models.let_everything_go()
        assert [(await _read(response)).last[0] for response in held[2:]] == ["done"]
        await runs_are(0)


async def test_research_jobs_past_the_running_limit_queue_then_are_refused(
    corpus: Running,
) -> None:
    owner = await corpus.account("viewer")
    release = asyncio.Event()
    original = corpus.app.state.resources
    corpus.app.state.resources = dataclasses.replace(original, models=deep_run(release))
    try:
        async with mcp_client(corpus.mcp_url, owner.key) as client:
            started = [
                _ok(await client.call_tool("deep_research", {"question": f"Rollbacks {n}?"}))
                for n in range(JOBS + QUEUED)
            ]
            refused = await client.call_tool("deep_research", {"question": "One more?"})
            last = started[-1]["job_id"]
            polled = _ok(await client.call_tool("research_result", {"job_id": last}))
            assert [s["status"] for s in started] == ["running"] + ["queued"] * QUEUED
            assert [s["answer"].split(".")[0] for s in started[JOBS:]] == [
                f"queued: {n} ahead of it" for n in range(QUEUED)
            ]
            assert _code(refused) == "rate_limited"
            assert (polled["status"], polled["answer"]) == ("queued", started[-1]["answer"])

            release.set()

            async def all_done() -> bool:
                for job in started:
                    result = _ok(
                        await client.call_tool("research_result", {"job_id": job["job_id"]})
                    )
                    if result["status"] != "done":
                        return False
                return True

            await eventually(all_done, "the running job, then the queued ones, finish")
            # Every job finished: the next one is no longer refused, and runs at once.
            started.append(
                _ok(await client.call_tool("deep_research", {"question": "Rollbacks again?"}))
            )
            assert started[-1]["status"] in {"running", "done"}
            await eventually(all_done, "the last job finishes")
    finally:
        release.set()
        corpus.app.state.resources = original
    assert _limits(corpus).runs(owner.user.id) == 0


async def test_research_calls_made_at_once_never_pass_a_persons_cap(corpus: Running) -> None:
    owner = await corpus.account("viewer")
    release = asyncio.Event()
    original = corpus.app.state.resources
    corpus.app.state.resources = dataclasses.replace(original, models=deep_run(release))
    try:

        async def research(n: int) -> Any:
            async with mcp_client(corpus.mcp_url, owner.key) as client:
                return await client.call_tool("deep_research", {"question": f"At once {n}?"})

        results = await asyncio.gather(*(research(n) for n in range(3 * (JOBS + QUEUED))))
        admitted = [_ok(result) for result in results if not result.is_error]
        assert sorted(a["status"] for a in admitted) == ["queued"] * QUEUED + ["running"] * JOBS
        assert {_code(result) for result in results if result.is_error} == {"rate_limited"}
        release.set()

        async def all_done() -> bool:
            async with mcp_client(corpus.mcp_url, owner.key) as client:
                for job in admitted:
                    result = await client.call_tool("research_result", {"job_id": job["job_id"]})
                    if _ok(result)["status"] != "done":
                        return False
            return True

        await eventually(all_done, "the admitted jobs finish")
    finally:
        release.set()
        corpus.app.state.resources = original
