"""One answering run as its operators see it: a structured log line when it ends (mode, steps,
model calls, tokens, outcome) and the agent-run metrics. Never the question or the answer.

The tally watches the run's events as they are emitted, and counts the model calls that
`ask_model` reports to it through a context variable (set in the run's task; the graph's tasks
inherit it)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from app.asking.schemas import DoneEvent, ErrorEvent, ModeEvent, Step
from app.logs import event
from app.observe import metrics

logger = logging.getLogger("corpus.agents.run")


@dataclass
class Tally:
    door: str
    mode: str = "fast"
    steps: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # answered, extractive, fell_back, error (with `error`), cancelled (no last event)
    outcome: str = "cancelled"
    error: str | None = None
    started: float = field(default_factory=time.perf_counter)

    def see(self, emitted: Any) -> None:
        if isinstance(emitted, ModeEvent):
            self.mode = emitted.mode
        elif isinstance(emitted, Step):
            self.steps += 1
        elif isinstance(emitted, DoneEvent):
            self.mode = emitted.mode
            self.outcome = (
                "extractive"
                if emitted.extractive
                else "fell_back"
                if emitted.fell_back
                else "answered"
            )
        elif isinstance(emitted, ErrorEvent):
            self.outcome, self.error = "error", emitted.code


_current: ContextVar[Tally | None] = ContextVar("agent_run", default=None)


@contextmanager
def observed_run(door: str, emit: Callable[[Any], None]) -> Iterator[Callable[[Any], None]]:
    """For the block: `emit`, watched by a tally that is logged and counted when it ends."""
    tally = Tally(door=door)
    token = _current.set(tally)

    def watched(emitted: Any) -> None:
        tally.see(emitted)
        emit(emitted)

    try:
        yield watched
    finally:
        _current.reset(token)
        _report(tally)


def model_called(usage: Mapping[str, Any] | None) -> None:
    """A model call of the current run ended; `usage` is the reply's usage metadata, when the
    provider reported one."""
    tally = _current.get()
    if tally is None:
        return
    tally.model_calls += 1
    if usage:
        tally.input_tokens += int(usage.get("input_tokens") or 0)
        tally.output_tokens += int(usage.get("output_tokens") or 0)


def _report(tally: Tally) -> None:
    metrics.AGENT_RUNS.labels(tally.mode, tally.outcome).inc()
    metrics.AGENT_MODEL_CALLS.labels(tally.mode).inc(tally.model_calls)
    metrics.AGENT_TOKENS.labels(tally.mode, "input").inc(tally.input_tokens)
    metrics.AGENT_TOKENS.labels(tally.mode, "output").inc(tally.output_tokens)
    elapsed_ms = round((time.perf_counter() - tally.started) * 1000, 1)
    event(
        logger,
        "agent run %s: %s, %d steps, %d model calls, %d tokens, %.1fms",
        tally.mode,
        tally.outcome if tally.error is None else f"error {tally.error}",
        tally.steps,
        tally.model_calls,
        tally.input_tokens + tally.output_tokens,
        elapsed_ms,
        kind="agent_run",
        door=tally.door,
        mode=tally.mode,
        outcome=tally.outcome,
        error=tally.error,
        steps=tally.steps,
        model_calls=tally.model_calls,
        input_tokens=tally.input_tokens,
        output_tokens=tally.output_tokens,
        duration_ms=elapsed_ms,
    )
