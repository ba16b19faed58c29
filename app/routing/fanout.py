"""Fan-out (DESIGN.md §5): one search per workspace, concurrently, under one hard deadline. A
workspace that fails or runs out of time is reported with its reason; the others answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import AppError
from app.routing.context import Passage
from app.routing.remote import RemoteFailed
from app.routing.schemas import Failure

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Found:
    """Passages in priority order (the workspaces' order, each workspace's best first)."""

    passages: list[Passage]
    failures: list[Failure]


def _reason(exc: BaseException) -> str:
    if isinstance(exc, AppError):
        return f"{exc.code}: {exc.message}"
    if isinstance(exc, RemoteFailed):
        return str(exc)
    return f"internal error ({type(exc).__name__}); the server log has it"


async def fan_out(
    workspaces: Sequence[str],
    search: Callable[[str], Coroutine[Any, Any, list[Passage]]],
    *,
    timeout_s: float,
) -> Found:
    """Run `search(workspace)` for every workspace at once and wait at most `timeout_s`."""
    if not workspaces:
        return Found([], [])
    tasks = {w: asyncio.create_task(search(w), name=f"fan-out {w}") for w in workspaces}
    try:
        await asyncio.wait(tasks.values(), timeout=timeout_s)
    finally:
        late = [t for t in tasks.values() if not t.done()]
        for task in late:
            task.cancel()
        # Wait for the cancellations, so that no search outlives the request holding a
        # pooled connection.
        await asyncio.gather(*late, return_exceptions=True)
    passages: list[Passage] = []
    failures: list[Failure] = []
    for workspace, task in tasks.items():
        if task.cancelled():
            failures.append(
                Failure(workspace=workspace, reason=f"timed out after {timeout_s * 1000:.0f} ms")
            )
            continue
        exc = task.exception()
        if exc is not None:
            if not isinstance(exc, AppError | RemoteFailed):
                logger.error("fan-out: %s failed", workspace, exc_info=exc)
            failures.append(Failure(workspace=workspace, reason=_reason(exc)))
            continue
        passages.extend(task.result())
    return Found(passages, failures)
