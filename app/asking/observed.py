"""One answering run as its operators see it: a structured log line when it ends (mode, steps,
model calls, tokens, outcome) and the agent-run metrics. Never the question or the answer.

The tally watches the run's events as they are emitted, and reads the model calls the agents
count (`app.agents.observed`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from app.agents.observed import ModelUse, counting_model_calls
from app.asking.schemas import DoneEvent, ErrorEvent, ModeEvent, Step
from app.logs import event
from app.observe import metrics, tracing
from app.search.schemas import Door

logger = logging.getLogger("corpus.agents.run")


@dataclass
class Tally:
    door: Door
    use: ModelUse
    mode: str = "fast"
    steps: int = 0
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


@contextmanager
def observed_run(door: Door, emit: Callable[[Any], None]) -> Iterator[Callable[[Any], None]]:
    """For the block: `emit`, watched by a tally that is logged and counted when it ends."""
    with counting_model_calls() as use, tracing.span("agent.run", {"corpus.door": door}) as span:
        tally = Tally(door=door, use=use)

        def watched(emitted: Any) -> None:
            tally.see(emitted)
            emit(emitted)

        try:
            yield watched
        finally:
            _report(tally)
            tracing.set_attributes(
                span,
                {
                    "corpus.agent.mode": tally.mode,
                    "corpus.agent.outcome": tally.outcome,
                    "corpus.agent.error": tally.error,
                    "corpus.agent.steps": tally.steps,
                    "corpus.agent.model_calls": tally.use.model_calls,
                    "corpus.agent.input_tokens": tally.use.input_tokens,
                    "corpus.agent.output_tokens": tally.use.output_tokens,
                },
            )


def _report(tally: Tally) -> None:
    metrics.AGENT_RUNS.labels(tally.mode, tally.outcome).inc()
    metrics.AGENT_MODEL_CALLS.labels(tally.mode).inc(tally.use.model_calls)
    metrics.AGENT_TOKENS.labels(tally.mode, "input").inc(tally.use.input_tokens)
    metrics.AGENT_TOKENS.labels(tally.mode, "output").inc(tally.use.output_tokens)
    elapsed_ms = round((time.perf_counter() - tally.started) * 1000, 1)
    event(
        logger,
        "agent run %s: %s, %d steps, %d model calls, %d tokens, %.1fms",
        tally.mode,
        tally.outcome if tally.error is None else f"error {tally.error}",
        tally.steps,
        tally.use.model_calls,
        tally.use.input_tokens + tally.use.output_tokens,
        elapsed_ms,
        kind="agent_run",
        door=tally.door,
        mode=tally.mode,
        outcome=tally.outcome,
        error=tally.error,
        steps=tally.steps,
        model_calls=tally.use.model_calls,
        input_tokens=tally.use.input_tokens,
        output_tokens=tally.use.output_tokens,
        duration_ms=elapsed_ms,
    )
