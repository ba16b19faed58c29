"""What one run carries through its graphs: the caller and their scope, the way to the
database, the budgets, the chunks retrieved so far (the only ones an answer may cite), the
trace, and where its events go."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

from langchain_core.messages import BaseMessage, ToolMessage

from app.access.principal import Principal
from app.agents.gate import ModelGate
from app.agents.models import Models
from app.agents.schemas import Step, TokenEvent, Writes
from app.config import Settings
from app.db.engine import ShortTransaction
from app.rag.embeddings.base import Embedder
from app.search.schemas import Door


class BudgetSpent(Exception):
    """A budget of the run is spent; `what` names it."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True, slots=True)
class Retrieved:
    """A chunk this run retrieved, under the key the model cites it by."""

    key: int
    chunk_id: UUID
    document_id: UUID
    title: str
    heading_path: list[str]
    text: str
    # The workspace of its document (a citation's preview names it).
    workspace: str
    # Its page, in a converted PDF (a citation names it).
    page: int | None = None


@dataclass
class Ledger:
    """The chunks retrieved during the run, each under one `[n]` key for the whole run."""

    by_chunk: dict[UUID, Retrieved] = field(default_factory=dict)
    best_similarity: float | None = None

    def add(
        self,
        *,
        chunk_id: UUID,
        document_id: UUID,
        title: str,
        heading_path: list[str],
        text: str,
        workspace: str,
        page: int | None = None,
    ) -> Retrieved:
        known = self.by_chunk.get(chunk_id)
        if known is not None:
            return known
        entry = Retrieved(
            key=len(self.by_chunk) + 1,
            chunk_id=chunk_id,
            document_id=document_id,
            title=title,
            heading_path=heading_path,
            text=text,
            workspace=workspace,
            page=page,
        )
        self.by_chunk[chunk_id] = entry
        return entry

    def by_key(self) -> dict[int, Retrieved]:
        return {entry.key: entry for entry in self.by_chunk.values()}

    def note_similarity(self, similarity: float | None) -> None:
        if similarity is not None and (
            self.best_similarity is None or similarity > self.best_similarity
        ):
            self.best_similarity = similarity


@dataclass
class Budget:
    """The run's limits: a deadline, model calls, tool calls, and the context put in front of
    the model. A limit hit is a step in the trace."""

    deadline: float  # time.monotonic() at which the run stops
    max_model_calls: int
    max_tool_calls: int
    max_context_chars: int
    model_calls: int = 0
    tool_calls: int = 0

    def seconds_left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def model_call(self) -> None:
        """Count a model call.

        Raises:
            BudgetSpent: the model calls or the deadline are spent.
        """
        if self.seconds_left() <= 0:
            raise BudgetSpent("deadline")
        if self.model_calls >= self.max_model_calls:
            raise BudgetSpent(f"model calls ({self.max_model_calls})")
        self.model_calls += 1

    def tool_call(self) -> None:
        """Count a tool call.

        Raises:
            BudgetSpent: the tool calls are spent.
        """
        if self.tool_calls >= self.max_tool_calls:
            raise BudgetSpent(f"tool calls ({self.max_tool_calls})")
        self.tool_calls += 1


CLIPPED = "[clipped to fit the context budget; search again if you need this]"


def fit_context(messages: list[BaseMessage], max_chars: int) -> tuple[list[BaseMessage], int]:
    """The messages with the oldest tool results clipped until they fit `max_chars`; and how
    many were clipped. The system prompt, the question and the latest results stay."""

    def size(message: BaseMessage) -> int:
        return len(str(message.content))

    total = sum(size(m) for m in messages)
    if total <= max_chars:
        return messages, 0
    fitted = list(messages)
    clipped = 0
    for i, message in enumerate(fitted[:-1]):
        if total <= max_chars:
            break
        if isinstance(message, ToolMessage) and message.content != CLIPPED:
            total -= size(message) - len(CLIPPED)
            fitted[i] = message.model_copy(update={"content": CLIPPED})
            clipped += 1
    if total > max_chars:
        # Still over: the last message itself is clipped (a long question or one huge result).
        last = fitted[-1]
        keep = max(0, len(str(last.content)) - (total - max_chars))
        fitted[-1] = last.model_copy(update={"content": str(last.content)[:keep]})
        clipped += 1
    return fitted, clipped


@dataclass
class Run:
    """One run of the agents for one question."""

    question: str
    principal: Principal
    settings: Settings
    embedder: Embedder
    models: Models
    # Opens one short transaction, committed when its block ends: each tool call takes one,
    # so a run holds no connection while the model thinks.
    transaction: ShortTransaction
    emit: Callable[[Step | TokenEvent], None]
    budget: Budget
    # The process's model calls at once: each call waits for one of its slots (ask_model).
    model_calls: ModelGate
    door: Door = "api"
    # What the asker allowed this run to write (AskRequest.writes; never the model's to set):
    # "off" offers no tool that writes, whatever the role.
    writes: Writes = "off"
    workspaces: list[str] | None = None
    document_ids: list[UUID] | None = None
    # The asker's tags: every search of the run keeps to documents carrying all of them.
    tags: list[str] | None = None
    # Earlier turns of the chat, oldest first: (role, text).
    history: list[tuple[str, str]] = field(default_factory=list)
    # The chunks those turns were drawn from: read by this run as much as its own retrievals.
    drawn_from: frozenset[UUID] = frozenset()
    # What the run was shown that is not for everyone, besides chunks (a private document's
    # title in a listing, the documentation gaps): why a note of it must stay private.
    restricted: set[str] = field(default_factory=set)
    ledger: Ledger = field(default_factory=Ledger)
    trace: list[Step] = field(default_factory=list)
    trace_id: UUID = field(default_factory=uuid4)
    # Which budget stopped the run early, if one did.
    stopped: str | None = None
    # The compiled loop of model and tools, which the deep run's subagents reuse.
    react: Any = None

    def step(self, kind: str, label: str, detail: str = "") -> None:
        """Record a step in the trace and stream it."""
        step = Step(kind=kind, label=label, detail=detail[:2000])
        self.trace.append(step)
        self.emit(step)

    def budget_hit(self, what: str) -> None:
        if self.stopped is None:
            self.stopped = what
        self.step("budget", f"budget reached: {what}")

    def read(self) -> set[UUID]:
        """Every chunk whose text this run has put in front of the model: what it retrieved,
        cited or not, and what its chat history was drawn from. A model may copy any of it."""
        return {*self.ledger.by_chunk, *self.drawn_from}
