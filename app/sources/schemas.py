"""Shapes of sources (issue #35): a folder or a git repository kept in sync with a workspace,
its runs, and where a synced document came from."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from app.documents.schemas import Document, DocumentText
from app.schemas import NoNul, omit_null_defaults

SourceKind = Literal["folder", "git"]
RunStatus = Literal["running", "succeeded", "failed"]
RunTrigger = Literal["manual", "schedule", "webhook", "cli"]

# A folder's absolute path, a repository's URL (https://, ssh://, git@host:path, file://) or
# local path. Where it may point is the service's check.
Location = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000), NoNul
]


def _branch(name: str) -> str:
    # A leading dash would read as an option of git; `..` as a range.
    if name.startswith("-") or ".." in name:
        raise ValueError("is not a branch name")
    return name


Branch = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9._/\-]{1,200}$"),
    AfterValidator(_branch),
]
# A glob over the path inside the source (`docs/**/*.md`, `**/CHANGELOG.md`).
Glob = Annotated[str, StringConstraints(min_length=1, max_length=500), NoNul]
# A token (HTTPS) or a deploy key (an SSH private key); stored encrypted, never shown again.
Secret = Annotated[str, StringConstraints(min_length=1, max_length=20000), NoNul]
MAX_GLOBS = 50


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceCreate(_Input):
    kind: SourceKind
    location: Location
    branch: Branch | None = Field(
        default=None, description="git only; null: the repository's default branch."
    )
    include: list[Glob] = Field(
        default_factory=list,
        max_length=MAX_GLOBS,
        description="Globs of the paths to take; empty: every file of a supported type.",
    )
    exclude: list[Glob] = Field(default_factory=list, max_length=MAX_GLOBS)
    secret: Secret | None = Field(
        default=None,
        description="A token (HTTPS) or a deploy key (SSH) for a private repository; stored "
        "encrypted, never shown again.",
    )
    paused: bool = False
    schedule_minutes: int | None = Field(
        default=None, ge=5, le=10080, description="Minutes between scheduled syncs; null: none."
    )


class SourceUpdate(_Input):
    model_config = ConfigDict(json_schema_extra=omit_null_defaults)

    # Leave a field out to keep it; null is refused where a value must stay (location) and
    # clears the others (branch, secret, schedule).
    location: Location | SkipJsonSchema[None] = None
    branch: Branch | None = None
    include: Annotated[list[Glob], Field(max_length=MAX_GLOBS)] | SkipJsonSchema[None] = None
    exclude: Annotated[list[Glob], Field(max_length=MAX_GLOBS)] | SkipJsonSchema[None] = None
    secret: Secret | None = None
    paused: bool | SkipJsonSchema[None] = None
    schedule_minutes: Annotated[int, Field(ge=5, le=10080)] | None = None


class KnowledgeSource(BaseModel):
    id: UUID
    workspace: str
    kind: SourceKind
    location: str
    branch: str | None
    include: list[str]
    exclude: list[str]
    has_secret: bool
    paused: bool
    schedule_minutes: int | None
    last_commit: str | None
    last_synced_at: datetime | None
    syncing: bool = Field(description="A sync holds the source's lease now.")
    document_count: int
    webhook_url: str = Field(description="Where a push webhook is sent (POST).")
    webhook_secret: str | None = Field(
        description="The webhook's secret (GitHub and Gitea sign with it; GitLab sends it as "
        "X-Gitlab-Token); null when this server's key cannot open it."
    )
    created_at: datetime
    updated_at: datetime


class RunFailure(BaseModel):
    path: str
    reason: str


class SourceRun(BaseModel):
    id: UUID
    source_id: UUID
    trigger: RunTrigger
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None
    commit: str | None
    added: int
    updated: int
    removed: int
    unchanged: int
    failed: int
    failures: list[RunFailure]
    error: str | None


class StaleCommit(BaseModel):
    """A commit after the document's own last change that changed code it names."""

    commit: str
    date: datetime
    paths: list[str]
    identifiers: list[str]


class Provenance(BaseModel):
    """Where a synced document came from: its source, its path there, and for git the commit
    and date of its last change, and the later commits that may have made it stale."""

    document_id: UUID
    source_id: UUID
    kind: SourceKind
    location: str
    branch: str | None
    path: str
    commit: str | None
    commit_date: datetime | None
    url: str | None = Field(description="The file on its host's web page, when one is known.")
    stale: bool
    stale_commits: list[StaleCommit]


class SyncedDocument(Document):
    """A document with where it came from, flat as search hits carry it (all null and `stale`
    false for one no source synced)."""

    source_path: str | None = None
    commit: str | None = None
    commit_date: datetime | None = None
    stale: bool = False


class SyncedDocumentText(DocumentText):
    """A document's text, its document carrying where it came from."""

    document: SyncedDocument


class StaleDocument(BaseModel):
    """A document that may be stale, for the dashboard's list."""

    document_id: UUID
    title: str
    workspace: str
    path: str
    commit_date: datetime | None
    stale_commits: list[StaleCommit]


class PushReceived(BaseModel):
    """A webhook's reply: whether the push started a sync (a push to another branch does not)."""

    syncing: bool
