"""Shapes of documents and their chunks (API.md, "Documents and search")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from app.kit.types import Slug, Tag, Title
from app.schemas import PlainText, omit_null_defaults

Visibility = Literal["org", "private"]
MAX_TAGS = 32


class _Input(BaseModel):
    # Unknown fields are mistakes (a typo in "visibilty" must not silently publish a document).
    model_config = ConfigDict(extra="forbid")


def _unique_tags(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(tags))


class DocumentCreate(_Input):
    title: Title
    content: PlainText = Field(min_length=1)
    workspace: Slug | None = None
    visibility: Visibility = "org"
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    source: PlainText | None = Field(default=None, max_length=2000)

    _tags = field_validator("tags")(_unique_tags)


class DocumentUpdate(_Input):
    model_config = ConfigDict(json_schema_extra=omit_null_defaults)

    # Leave a field out to keep it; null is refused (and not in the schema).
    title: Title | SkipJsonSchema[None] = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | SkipJsonSchema[None] = None
    visibility: Visibility | SkipJsonSchema[None] = None
    content: Annotated[PlainText, Field(min_length=1)] | SkipJsonSchema[None] = None

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        return None if tags is None else _unique_tags(tags)


class Document(BaseModel):
    id: UUID
    title: str
    workspace: str
    owner_id: UUID | None
    visibility: Visibility
    tags: list[str]
    source: str | None
    media_type: str
    chunk_count: int
    version: int
    created_at: datetime
    updated_at: datetime


class DocumentCreated(Document):
    """A create's reply: `unchanged` when identical content was already there (nothing written);
    `replaced` when an upload asked to replace the document from the same file and its content
    became that document's new version."""

    unchanged: bool = False
    replaced: bool = False


class SampleLoaded(BaseModel):
    """What loading the sample documents did: a second load finds them all unchanged."""

    workspace: str = Field(description="The workspace the sample documents are in")
    created_workspace: bool = Field(description="Whether this load created the workspace")
    added: int
    updated: int
    unchanged: int
    chunks: int = Field(description="Chunks written by this load")


class DocumentWithContent(Document):
    content: str
    # A note an agent saved: the chunks its run had read (null for any other document).
    derived_from: list[UUID] | None = None
    # An uploaded PDF is kept as sent: GET /api/documents/{id}/original.
    has_original: bool = False


class Chunk(BaseModel):
    id: UUID
    ordinal: int
    heading_path: list[str]
    text: str
    start: int
    end: int
    # The page of a converted PDF the chunk mostly sits on (from 1); null for other documents.
    page: int | None = None


class DocumentFilters(BaseModel):
    workspace: PlainText | None = None
    tag: PlainText | None = None
    owner: UUID | None = None
    visibility: Visibility | None = None
    q: PlainText | None = Field(default=None, max_length=500)
    # True: only the synced documents that may be stale (a later commit changed code they
    # name); false: all but those.
    stale: bool | None = None


class DocumentText(BaseModel):
    """A document's text, whole or a range of its chunks (`chunk_start`..`chunk_end`)."""

    document: Document
    chunk_start: int | None
    chunk_end: int | None
    chunk_count: int
    text: str


class ChunkRange(BaseModel):
    """A document with its chunks from `chunk_start` to `chunk_end` (inclusive ordinals; none
    when the range holds none), each with its id: what an agent reads and cites."""

    document: DocumentWithContent
    chunk_start: int
    chunk_end: int
    chunks: list[Chunk]
    chunk_count: int


class RelatedDocument(BaseModel):
    """A document near another one: the cosine similarity of their chunks' centroids."""

    id: UUID
    title: str
    workspace: str
    similarity: float


class LinkingDocument(BaseModel):
    """A document whose content links to another one (a backlink)."""

    id: UUID
    title: str
    workspace: str
    updated_at: datetime


class OutgoingLink(BaseModel):
    """A link in a document's content to another document, and the one it reaches now (null
    when no document the caller may see is at that address or path: not in the corpus)."""

    href: str
    document_id: UUID | None
    title: str | None
    workspace: str | None


class ChunkPreview(BaseModel):
    """One chunk with where it lives: what a citation shows on hover."""

    id: UUID
    document_id: UUID
    title: str
    workspace: str
    ordinal: int
    heading_path: list[str]
    text: str
    start: int
    end: int
    # The page of a converted PDF the chunk mostly sits on (from 1); null for other documents.
    page: int | None = None


class TagCount(BaseModel):
    """A tag in use, and how many of the documents the caller may see carry it."""

    tag: str
    documents: int


class TagList(BaseModel):
    items: list[TagCount]
