"""The ranking's shapes: the modes it ranks by, and a ranked passage with why it ranked (the
search service's hits, `app.search.schemas`)."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel

SearchMode = Literal["hybrid", "dense", "keyword"]


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
    # The page of a converted PDF the passage mostly sits on (from 1); null for other documents.
    page: int | None = None
    # A document a source synced (issue #35): its path there, the commit of its last change,
    # and whether code it names changed in later commits. Null and false for any other.
    source_path: str | None = None
    commit: str | None = None
    stale: bool = False
