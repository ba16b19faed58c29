"""Shapes of asking (API.md, "Asking"): the request, the stream's events, the answer and its
citations, chats and research jobs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.agents.schemas import AskMode, Citation, RunMode, Step, TokenEvent, Writes
from app.kit.types import Slug, Tag
from app.schemas import NoNul, PlainText

# Asking's API, the agents' shapes in it included: the doors import all of it from here.
__all__ = [
    "EVENT_NAMES",
    "Answer",
    "AnswerStatus",
    "AskMode",
    "AskRequest",
    "Chat",
    "ChatMessage",
    "ChatRun",
    "ChatWithMessages",
    "Citation",
    "DoneEvent",
    "ErrorEvent",
    "Event",
    "JobStatus",
    "ModeEvent",
    "ResearchJob",
    "RunMode",
    "Step",
    "TokenEvent",
    "Writes",
]


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: PlainText = Field(min_length=1)
    mode: AskMode = "auto"
    chat_id: UUID | None = None
    workspaces: list[Slug] | None = Field(default=None, max_length=100)
    # "Ask about this doc": the run searches and reads these documents only.
    document_ids: list[UUID] | None = Field(default=None, max_length=50)
    persona: Slug | None = None
    tags: list[Tag] | None = Field(
        default=None,
        max_length=32,
        description="Search only documents that carry every one of these tags (as search does).",
    )
    writes: Writes = Field(
        default="off",
        description=(
            "What the agents may write during this run: `off` (the default: no tool that "
            "writes is offered), `private` (notes visible to you alone), or `org` (a note is "
            "visible to the organisation only if everything the run read is; else private). "
            "Editors and admins only."
        ),
    )


# A research job's answer while it waits in line or runs, when it is ready, or why it failed.
AnswerStatus = Literal["done", "queued", "running", "failed"]


class Answer(BaseModel):
    """A run collected into one reply: MCP's `ask_docs`, `deep_research` and
    `research_result`, which cannot stream."""

    answer: str
    citations: list[Citation]
    mode: str
    extractive: bool
    # The deep research job to poll with research_result, while it waits in line or runs.
    job_id: str | None = None
    status: AnswerStatus = "done"
    fell_back: bool = False
    # Why the mode was chosen, and the run's steps (tool calls, delegations, budget hits).
    reason: str = ""
    steps: list[str] = Field(default_factory=list)

    def linked(self, base_url: str) -> Answer:
        """The answer with its citations' links absolute under `base_url`: for a client that
        reads it outside the web app (an agent over MCP), where a path alone leads nowhere."""
        base = base_url.rstrip("/")
        citations = [
            c.model_copy(update={"url": base + c.url}) if c.url.startswith("/") else c
            for c in self.citations
        ]
        return self.model_copy(update={"citations": citations})

    @classmethod
    def pending(cls, job_id: UUID, ahead: int | None = None) -> Answer:
        """A research job without its answer yet: running, or queued with `ahead` of the
        caller's jobs before it."""
        if ahead is None:
            text = (
                "Still researching: call research_result with this job_id in a minute or so "
                "for the answer."
            )
        else:
            text = (
                f"queued: {ahead} ahead of it. It starts when one of your running research "
                "jobs or answers ends; call research_result with this job_id later for the "
                "answer."
            )
        status: AnswerStatus = "running" if ahead is None else "queued"
        return cls(
            answer=text,
            citations=[],
            mode="deep",
            extractive=False,
            job_id=str(job_id),
            status=status,
        )

    @classmethod
    def failed(cls, job_id: UUID, why: str) -> Answer:
        """A research job that failed, and why."""
        return cls(
            answer=why,
            citations=[],
            mode="deep",
            extractive=False,
            job_id=str(job_id),
            status="failed",
        )


class ModeEvent(BaseModel):
    mode: RunMode
    reason: str
    run_id: UUID | None = Field(
        default=None,
        description=(
            "A deep run asked in a chat runs apart from its stream (ADR 0030): closing the "
            "stream leaves it running, and its turn lands in the chat; stop it with `POST "
            "/api/runs/{run_id}/cancel`. Null for a run the stream holds (closing it cancels "
            "the run)."
        ),
    )
    chat_id: UUID | None = Field(
        default=None,
        description="The chat the run's turn lands in, when it is known at the start.",
    )


class DoneEvent(BaseModel):
    answer: str
    citations: list[Citation]
    mode: RunMode
    fell_back: bool
    extractive: bool
    chat_id: UUID | None
    trace_id: UUID


class ErrorEvent(BaseModel):
    code: str
    message: str


Event = ModeEvent | Step | TokenEvent | DoneEvent | ErrorEvent

EVENT_NAMES: dict[type[BaseModel], str] = {
    ModeEvent: "mode",
    Step: "step",
    TokenEvent: "token",
    DoneEvent: "done",
    ErrorEvent: "error",
}


class Chat(BaseModel):
    id: UUID
    title: str
    # The binding it was made under: a key bound to a workspace sees only its own chats.
    workspace_scope: str | None = None
    persona: str | None = None
    created_at: datetime
    updated_at: datetime


# A chat's title: a new chat takes its first question's first characters, as many as this.
CHAT_TITLE_CHARS = 120


class ChatUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=CHAT_TITLE_CHARS),
        NoNul,
    ] = Field(description="The chat's new title (1 to 120 characters, trimmed).")


class ChatMessage(BaseModel):
    id: UUID
    role: Literal["user", "assistant"]
    content: str
    mode: str | None
    citations: list[Citation]
    trace: list[Step]
    created_at: datetime


class ChatRun(BaseModel):
    """A deep run of the chat that has left no turn in it (yet): running, or failed (and
    why: cancelled by its owner, the server stopped, the model failed)."""

    id: UUID
    question: str
    status: Literal["running", "failed"]
    error: str | None
    created_at: datetime


class ChatWithMessages(Chat):
    messages: list[ChatMessage]
    runs: list[ChatRun] = Field(
        default_factory=list,
        description="Its deep runs still running, or failed without a turn, oldest first.",
    )


JobStatus = Literal["running", "done", "failed"]


class ResearchJob(BaseModel):
    id: UUID
    user_id: UUID
    question: str
    workspace_scope: str | None = None
    persona: str | None = None
    status: JobStatus
    # The answer, once the job is done (its citations checked again as the caller reads it).
    result: Answer | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
