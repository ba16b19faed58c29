"""The deep orchestrator, driven by a scripted model: it plans, runs its researchers at the same
time, has every claim verified, revises at most N times, and falls back to fast on failure."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from app.asking.schemas import DoneEvent, ModeEvent, Step
from tests.agents.conftest import World, run
from tests.agents.scripted import Call, Reply, calling, scripted, tool_call

PLANNER = "You are the orchestrator of a deep research run"
SCOUT = "You are the scout"
RESEARCHER = "You are a researcher"
WRITER = "You are the orchestrator. Write"
VERIFIER = "You are the verifier"
FAST = "You answer questions"

TODOS = ["How does a rollback work?", "What is the retry policy?"]


def _researchers_at_a_barrier() -> tuple[list[str], Callable[[Call], Awaitable[Reply]]]:
    started: list[str] = []
    both = asyncio.Event()

    async def first_step(call: Call) -> Reply:
        started.append(call.system)
        if len(started) == len(TODOS):
            both.set()
        # Held until every researcher has started: researchers run one after another would
        # never get here together, and the wait would time out.
        await asyncio.wait_for(both.wait(), timeout=10)
        query = "roll back a deploy" if "rollback" in call.system else "retries backoff"
        return calling(tool_call("search_corpus", query=query))

    return started, first_step


async def test_deep_plans_runs_researchers_together_verifies_each_claim_and_revises_at_most_n(
    world: World,
) -> None:
    started, first_step = _researchers_at_a_barrier()
    verdicts = 0

    async def respond(call: Call) -> Reply:
        nonlocal verdicts
        if call.system.startswith(PLANNER):
            return calling(tool_call("write_todos", todos=TODOS))
        if call.system.startswith(SCOUT):
            if not call.tool_results:
                return calling(tool_call("list_corpus_documents"))
            return calling(text="- Deploy rollback and Retry policy cover this.")
        if call.system.startswith(RESEARCHER):
            if not call.tool_results:
                return await first_step(call)
            return calling(text=f"- what the passage says {call.keys()[:1]}")
        if call.system.startswith(WRITER):
            return calling(text="Roll back with make rollback [1]. Retries happen forever [2].")
        if call.system.startswith(VERIFIER):
            verdicts += 1
            return calling(
                tool_call(
                    "verdict",
                    claims=[
                        {
                            "claim": "Roll back with make rollback",
                            "citations": ["[1]"],
                            "status": "SUPPORTED",
                        },
                        {
                            "claim": "Retries happen forever",
                            "citations": ["[2]"],
                            "status": "CONTRADICTED",
                            "note": "three times",
                        },
                    ],
                    verdict="REVISE",
                    feedback="Fix the retry claim.",
                )
            )
        raise AssertionError(f"unexpected agent: {call.system[:60]}")

    models = scripted(respond)
    viewer = await world.principal(world.viewer)
    services = world.services(models, deep_max_revisions=1)
    events = await run(world, services, viewer, "Compare rollbacks and retries", mode="auto")

    assert isinstance(events[0], ModeEvent)
    assert (events[0].mode, events[0].reason) == ("deep", "auto: comparative wording ('compare')")
    steps = [e for e in events if isinstance(e, Step)]
    labels = [s.label for s in steps]
    assert labels[0] == "plan: 2 sub-questions"
    assert len(started) == 2
    assert sum(label.startswith("delegate → researcher") for label in labels) == 2
    assert [s.label.split(":")[0] for s in steps if s.kind == "verify"] == [
        "SUPPORTED",
        "CONTRADICTED",
        "SUPPORTED",
        "CONTRADICTED",
    ]
    assert verdicts == 2  # the first draft and one revision: N = 1
    assert "revision 1" in labels
    assert "revision cap reached (1): the draft stands" in labels
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert (done.mode, done.fell_back) == ("deep", False)
    assert [c.key for c in done.citations] == ["[1]", "[2]"]


async def test_a_failing_deep_run_falls_back_to_fast_and_the_stream_says_so(
    world: World,
) -> None:
    def respond(call: Call) -> Reply:
        if call.system.startswith(PLANNER):
            return ValueError("the model's plan came back malformed")
        if call.system.startswith(FAST):
            if not call.tool_results:
                return calling(tool_call("search_corpus", query="rollback"))
            return calling(text="Use make rollback [1].")
        raise AssertionError(f"unexpected agent: {call.system[:60]}")

    viewer = await world.principal(world.viewer)
    events = await run(world, world.services(scripted(respond)), viewer, "Rollback?", mode="deep")
    fallback = [e for e in events if isinstance(e, Step) and e.kind == "fallback"]
    assert len(fallback) == 1
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert (done.mode, done.fell_back) == ("fast", True)
    assert [c.key for c in done.citations] == ["[1]"]
