"""Shapes of search requests and hits."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.kit.types import Slug, Tag
from app.schemas import JsonInt, PlainText

SearchMode = Literal["hybrid", "dense", "keyword"]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: PlainText = Field(min_length=1)
    workspaces: list[Slug] | None = Field(default=None, max_length=100)
    tags: list[Tag] | None = Field(default=None, max_length=32)
    top_k: JsonInt = Field(default=10, ge=1, le=100)
    mode: SearchMode = "hybrid"


class SearchHit(BaseModel):
    chunk_id: UUID
    document_id: UUID
    title: str
    workspace: str
    heading_path: list[str]
    text: str
    vec_rank: int | None
    kw_rank: int | None
    similarity: float | None
    score: float
    matched_terms: list[str]


class SearchResult(BaseModel):
    hits: list[SearchHit]
    took_ms: float


# How `ask_docs` is asked to answer; `auto` picks for the question.
AskMode = Literal["auto", "fast", "deep"]


def chunk_url(document_id: UUID, chunk_id: UUID) -> str:
    """Where the web app shows a chunk: its document, scrolled to it."""
    return f"/documents/{document_id}#chunk-{chunk_id}"


# How much of a cited chunk a citation quotes.
SNIPPET_CHARS = 500


class Citation(BaseModel):
    key: str
    document_id: UUID
    chunk_id: UUID
    title: str
    heading_path: list[str]
    snippet: str
    url: str

    @classmethod
    def of(
        cls,
        key: int,
        *,
        document_id: UUID,
        chunk_id: UUID,
        title: str,
        heading_path: list[str],
        text: str,
    ) -> Citation:
        """The citation `[key]` of a chunk: its snippet, and the link to it in the web app."""
        return cls(
            key=f"[{key}]",
            document_id=document_id,
            chunk_id=chunk_id,
            title=title,
            heading_path=heading_path,
            snippet=text[:SNIPPET_CHARS],
            url=chunk_url(document_id, chunk_id),
        )


class Answer(BaseModel):
    answer: str
    citations: list[Citation]
    mode: str
    extractive: bool
    # The deep research job to poll with research_result, while it waits in line or runs.
    job_id: str | None = None
    status: Literal["done", "queued", "running", "failed"] = "done"
    fell_back: bool = False
    # Why the mode was chosen, and the run's steps (tool calls, delegations, budget hits).
    reason: str = ""
    steps: list[str] = Field(default_factory=list)
