"""Shapes of multi-corpus routing (API.md, "Multi-corpus"): the effective policy, the context
block, the knowledge search doors and the cache's figures."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.kit.types import Slug
from app.schemas import JsonInt, NoNul, PlainText

# Where an entry of the effective policy came from; `default` is a workspace no layer licenses
# (PROPRIETARY).
Layer = Literal["builtin", "file", "admin"]
LicenseSource = Literal["builtin", "file", "admin", "default"]

SessionId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"), NoNul]
MAX_PERSONA_WORKSPACES = 64
MAX_TOKEN_BUDGET = 32_000


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonaEntry(BaseModel):
    workspaces: list[str]
    source: Layer


class LicenseEntry(BaseModel):
    license: str
    source: LicenseSource


class Policy(BaseModel):
    """The effective policy, and which layer each entry came from."""

    routing_mode: str
    default_persona: str | None
    personas: dict[str, PersonaEntry]
    licenses: dict[str, LicenseEntry]
    missing_workspaces: list[str]


class PersonaUpdate(_Input):
    workspaces: Annotated[list[Slug], Field(max_length=MAX_PERSONA_WORKSPACES)]


# Why a remote workspace failed, as told to a caller who is not an admin.
REMOTE_FAILED = "the remote workspace did not answer"


class Failure(BaseModel):
    workspace: str
    reason: str = Field(
        description=f"Why it failed; for a remote workspace, to admins only (others read "
        f"{REMOTE_FAILED!r})."
    )


# A result's ids name a local chunk: a remote workspace's results have none (their server's
# ids mean nothing here, and could be a local document's: docs/SECURITY.md).
LOCAL_DOCUMENT = "The local document quoted; null for a remote workspace's result."
LOCAL_CHUNK = "The local chunk quoted; null for a remote workspace's result."
REMOTE_TITLE = "The document's title; a remote workspace's as one line of plain text."


class Source(BaseModel):
    key: str
    workspace: str
    license: str
    document_id: UUID | None = Field(description=LOCAL_DOCUMENT)
    chunk_id: UUID | None = Field(description=LOCAL_CHUNK)
    title: str = Field(description=REMOTE_TITLE)
    score: float | None
    stale: bool = Field(
        default=False, description="A synced document whose named code changed since."
    )


class ContextRequest(_Input):
    query: Annotated[PlainText, Field(max_length=100_000)] | None = None
    persona: Slug | None = None
    session_id: SessionId | None = None
    token_budget: Annotated[JsonInt, Field(ge=1, le=MAX_TOKEN_BUDGET)] | None = None
    top_k: Annotated[JsonInt, Field(ge=1, le=50)] = 5


class ContextBlock(BaseModel):
    block: str
    persona: str | None
    workspaces: list[str]
    sources: list[Source]
    failures: list[Failure]
    cache_hit: bool
    tokens: int
    # Workspaces the persona names that do not exist here (reported, not an error).
    missing_workspaces: list[str] = Field(default_factory=list)


class SessionMessage(_Input):
    text: Annotated[PlainText, Field(min_length=1, max_length=100_000)]


class KnowledgeSearch(_Input):
    query: Annotated[PlainText, Field(max_length=100_000)]
    top_k: Annotated[JsonInt, Field(ge=1, le=50)] = 5


class KnowledgeSearchMulti(_Input):
    query: Annotated[PlainText, Field(max_length=100_000)]
    workspaces: Annotated[list[Slug], Field(min_length=1, max_length=MAX_PERSONA_WORKSPACES)]
    top_k: Annotated[JsonInt, Field(ge=1, le=50)] = 5


class KnowledgeResult(BaseModel):
    workspace: str
    document_id: UUID | None = Field(description=LOCAL_DOCUMENT)
    chunk_id: UUID | None = Field(description=LOCAL_CHUNK)
    title: str = Field(description=REMOTE_TITLE)
    text: str
    score: float | None
    license: str
    heading_path: list[str] = Field(default_factory=list)


class KnowledgeResults(BaseModel):
    results: list[KnowledgeResult]
    failures: list[Failure]
    cache_hit: bool
    # What `rag_search` adds: the persona it routed by and the workspaces it searched.
    persona: str | None = None
    workspaces: list[str] = Field(default_factory=list)


class RoutedWorkspace(BaseModel):
    """A workspace as routing sees it: `rag_workspaces`."""

    slug: str
    title: str
    description: str
    tier: str
    license: str
    license_source: LicenseSource
    remote: bool
    document_count: int


class RoutedWorkspaces(BaseModel):
    items: list[RoutedWorkspace]


class CacheStats(BaseModel):
    size: int
    capacity: int
    hits: int
    misses: int
    hit_rate: float
    ttl_seconds: int
