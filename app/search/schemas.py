"""Shapes of searching: the request, its hits and why each ranked, and what searching keeps
(the documentation gaps)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.kit.types import Slug, Tag
from app.rag.schemas import SearchHit, SearchMode
from app.schemas import JsonInt, PlainText

# Where a question was asked, recorded with it so that gaps and usage can be told apart: the
# HTTP API's search, the web app's chat (`POST /api/ask`), or an MCP tool.
Door = Literal["api", "chat", "mcp"]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: PlainText = Field(min_length=1)
    workspaces: list[Slug] | None = Field(default=None, max_length=100)
    tags: list[Tag] | None = Field(default=None, max_length=32)
    # True: only passages of documents a source flagged may be stale; false: of the others.
    stale: bool | None = None
    top_k: JsonInt = Field(default=10, ge=1, le=100)
    mode: SearchMode = "hybrid"


class SearchResult(BaseModel):
    hits: list[SearchHit]
    took_ms: float


def chunk_url(document_id: UUID, chunk_id: UUID) -> str:
    """Where the web app shows a chunk: its document, scrolled to it."""
    return f"/documents/{document_id}#chunk-{chunk_id}"


class Gap(BaseModel):
    """Questions of similar wording that found nothing: how often, by how many people, and
    through how many agents (API keys and OAuth clients; none for the browser)."""

    question: str
    count: int
    people: int
    agents: int = 0
    last_asked_at: datetime
    examples: list[str]


class Gaps(BaseModel):
    items: list[Gap]
