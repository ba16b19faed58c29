"""Shapes of asking (API.md, "Asking"): the request, the stream's events, chats and jobs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.kit.types import Slug
from app.rag.schemas import AskMode, Citation
from app.schemas import NoNul, PlainText

# The modes a run resolves to.
RunMode = Literal["fast", "deep"]

# What a run may write, as the asker allows it for that run (never the model): nothing; notes
# private to the asker; or notes visible to the organisation when everything the run read is.
Writes = Literal["off", "private", "org"]


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: PlainText = Field(min_length=1)
    mode: AskMode = "auto"
    chat_id: UUID | None = None
    workspaces: list[Slug] | None = Field(default=None, max_length=100)
    # "Ask about this doc": the run searches and reads these documents only.
    document_ids: list[UUID] | None = Field(default=None, max_length=50)
    persona: Slug | None = None
    writes: Writes = Field(
        default="off",
        description=(
            "What the agents may write during this run: `off` (the default: no tool that "
            "writes is offered), `private` (notes visible to you alone), or `org` (a note is "
            "visible to the organisation only if everything the run read is; else private). "
            "Editors and admins only."
        ),
    )


class Step(BaseModel):
    """A tool call, a delegation or a budget hit, as it happens."""

    kind: str
    label: str
    detail: str = ""


class ModeEvent(BaseModel):
    mode: RunMode
    reason: str


class TokenEvent(BaseModel):
    text: str


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
    trace: list[dict[str, Any]]
    created_at: datetime


class ChatWithMessages(Chat):
    messages: list[ChatMessage]


JobStatus = Literal["running", "done", "failed"]


class ResearchJob(BaseModel):
    id: UUID
    user_id: UUID
    question: str
    workspace_scope: str | None = None
    persona: str | None = None
    status: JobStatus
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
