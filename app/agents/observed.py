"""The model calls of the current answering run, counted as `ask_model` makes them: asking's
run report (`app.asking.observed`) reads them. A context variable, set in the run's task; the
graph's tasks inherit it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass
class ModelUse:
    """A run's model calls so far, and the tokens the providers reported for them."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


_current: ContextVar[ModelUse | None] = ContextVar("agent_run_model_use", default=None)


@contextmanager
def counting_model_calls() -> Iterator[ModelUse]:
    """For the block: the model calls `model_called` reports, counted."""
    use = ModelUse()
    token = _current.set(use)
    try:
        yield use
    finally:
        _current.reset(token)


def model_called(usage: Mapping[str, Any] | None) -> None:
    """A model call of the current run ended; `usage` is the reply's usage metadata, when the
    provider reported one."""
    use = _current.get()
    if use is None:
        return
    use.model_calls += 1
    if usage:
        use.input_tokens += int(usage.get("input_tokens") or 0)
        use.output_tokens += int(usage.get("output_tokens") or 0)
