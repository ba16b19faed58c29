"""Shapes of the dashboard: figures, 30 days of use, composition, agents' activity, the feed."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.schemas import PlainText


class Figures(BaseModel):
    """What the caller may see: documents, their chunks and workspaces; accounts of people and
    of agents (active ones)."""

    documents: int
    chunks: int
    workspaces: int
    people: int
    agents: int


class Day(BaseModel):
    """One day (UTC) of use: documents added (that the caller may see), searches and questions
    (everyone's for those who read the gaps, else the caller's own)."""

    day: date
    uploads: int
    searches: int
    questions: int


class WorkspaceShare(BaseModel):
    workspace: str
    documents: int
    chunks: int


class TagShare(BaseModel):
    tag: str
    documents: int


class AgentActivity(BaseModel):
    """An agent's use of the corpus: an agent account (its keys) or an OAuth app (acting for
    the people who connected it)."""

    id: str
    kind: Literal["account", "oauth_app"]
    name: str
    # Keys for an account; people who connected it for an app.
    keys: int
    people: int
    # Through it, in the dashboard's 30 days: an account's by its keys, an app's by the tokens
    # people gave it (its questions are also the people's own). Null was once an app's.
    searches: int | None
    questions: int | None
    calls: int = Field(
        default=0,
        description=(
            "Its recorded calls in the dashboard's 30 days: searches, questions, and the "
            "changes audited as made through it (uploads, edits, deletions, admin acts)."
        ),
    )
    last_seen_at: datetime | None


class Dashboard(BaseModel):
    figures: Figures
    days: list[Day]
    by_workspace: list[WorkspaceShare]
    by_tag: list[TagShare]
    # Admins only (empty for anyone else): agents are administered.
    agents: list[AgentActivity]


ActivityKind = Literal["upload", "edit", "question", "search", "sign_in", "key_minted"]


class ActivityItem(BaseModel):
    at: datetime
    kind: ActivityKind
    actor: str | None
    actor_kind: Literal["human", "agent"] | None
    # What it was about: a document's title, a question's words, a key's name.
    subject: str
    document_id: UUID | None = None


class Activity(BaseModel):
    items: list[ActivityItem]


class GapDismissal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: PlainText = Field(
        min_length=1, max_length=4000, description="The gap's question, as GET /api/gaps names it."
    )
