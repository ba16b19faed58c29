"""The fan-out itself: every workspace is searched at once, and one that fails or overruns the
deadline is reported while the others answer."""

from __future__ import annotations

import asyncio

from app.errors import Unavailable
from app.routing.context import Passage
from app.routing.fanout import fan_out

WORKSPACES = ["a", "b", "c", "d", "e"]


def _found(workspace: str) -> list[Passage]:
    return [Passage(workspace=workspace, license="MIT", title=workspace, text="t", score=1.0)]


async def test_every_workspace_is_searched_at_once() -> None:
    started: set[str] = set()
    everyone = asyncio.Event()

    async def search(workspace: str) -> list[Passage]:
        # Answers only once all five have started: a fan-out that ran them one by one would
        # wait here until its deadline.
        started.add(workspace)
        if started == set(WORKSPACES):
            everyone.set()
        await everyone.wait()
        return _found(workspace)

    found = await fan_out(WORKSPACES, search, timeout_s=30)
    assert found.failures == []
    assert [p.workspace for p in found.passages] == WORKSPACES


async def test_a_failing_or_overrunning_workspace_is_reported_and_the_others_answer() -> None:
    never = asyncio.Event()
    cancelled: list[str] = []

    async def search(workspace: str) -> list[Passage]:
        if workspace == "b":
            raise Unavailable("the database is restarting")
        if workspace == "d":
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.append(workspace)
                raise
        return _found(workspace)

    found = await fan_out(WORKSPACES, search, timeout_s=0.2)
    assert [p.workspace for p in found.passages] == ["a", "c", "e"]
    assert [f.workspace for f in found.failures] == ["b", "d"]
    assert found.failures[0].reason.startswith("unavailable:")
    # The overrunning search was stopped, not left running past the request.
    assert cancelled == ["d"]
