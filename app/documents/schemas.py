"""Shapes of workspaces, documents and their chunks (API.md, "Documents and search")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlsplit
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.kit.types import Slug, Tag
from app.schemas import NoNul, PlainText, omit_null_defaults

Visibility = Literal["org", "private"]
Tier = Literal["core", "reference", "community"]

# An SPDX license id (or expression-free id such as "Apache-2.0", "CC-BY-4.0", "MIT") or the
# word PROPRIETARY.
LICENSE_PATTERN = r"^(PROPRIETARY|[A-Za-z0-9][A-Za-z0-9.+-]{0,63})$"
MAX_TAGS = 32
MAX_TITLE_CHARS = 500

License = Annotated[str, StringConstraints(pattern=LICENSE_PATTERN)]


def _no_credentials(url: str) -> str:
    if "@" in urlsplit(url).netloc:
        raise ValueError("carries credentials (user:password@): give the bearer as remote_token")
    return url


# A remote workspace's base URL: another Corpus, or any Anvil-compatible server. Where it may
# point (public addresses unless CORPUS_REMOTE_ALLOW_PRIVATE) is the service's check: it
# resolves the host.
RemoteUrl = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, pattern=r"^https?://[^\s/?#]+[^\s?#]*$", max_length=2000
    ),
    AfterValidator(_no_credentials),
]
# Its bearer: presented to that server, so stored encrypted and never shown again.
RemoteToken = Annotated[str, StringConstraints(min_length=1, max_length=4000), NoNul]
REMOTE_URL_HELP = (
    "The base URL of another Corpus or an Anvil-compatible server, searched at "
    "{remote_url}/v1/knowledge/search. Public addresses only (private and loopback ones with "
    "CORPUS_REMOTE_ALLOW_PRIVATE); no credentials in it. Shown to admins only."
)
REMOTE_TOKEN_HELP = (
    "The bearer the remote server expects; stored encrypted, never shown again. Every reader "
    "of this workspace searches with it and sees what it sees: use a key of a dedicated agent "
    "account that sees only what all of them may see."
)
Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE_CHARS), NoNul
]


class _Input(BaseModel):
    # Unknown fields are mistakes (a typo in "visibilty" must not silently publish a document).
    model_config = ConfigDict(extra="forbid")


class Workspace(BaseModel):
    id: UUID
    slug: str
    title: str
    description: str
    license: str | None
    tier: Tier
    document_count: int
    created_at: datetime
    updated_at: datetime
    # Set for a remote workspace, searched over HTTP with its own bearer (never shown); only
    # admins see it.
    remote_url: str | None = Field(
        default=None, description="A remote workspace's base URL, shown to admins only."
    )


@dataclass(frozen=True, slots=True)
class WorkspaceTarget:
    """A workspace as the fan-out searches it: where it lives and its license as set on it."""

    id: UUID
    slug: str
    license: str | None
    remote_url: str | None
    remote_token_encrypted: bytes | None


class WorkspaceCreate(_Input):
    slug: Slug
    title: Title
    description: PlainText = Field(default="", max_length=4000)
    license: License | None = None
    tier: Tier = "community"
    remote_url: RemoteUrl | None = Field(default=None, description=REMOTE_URL_HELP)
    remote_token: RemoteToken | None = Field(default=None, description=REMOTE_TOKEN_HELP)


class WorkspaceUpdate(_Input):
    model_config = ConfigDict(json_schema_extra=omit_null_defaults)

    # Leave a field out to keep it. Only `license` takes null ("from policy"); the others are
    # documented without null, and the service refuses an explicit one.
    title: Title | SkipJsonSchema[None] = None
    description: Annotated[PlainText, Field(max_length=4000)] | SkipJsonSchema[None] = None
    license: License | None = None
    tier: Tier | SkipJsonSchema[None] = None
    # null makes the workspace local again (and forgets its bearer).
    remote_url: RemoteUrl | None = Field(
        default=None, description=f"{REMOTE_URL_HELP} null makes the workspace local again."
    )
    remote_token: RemoteToken | None = Field(default=None, description=REMOTE_TOKEN_HELP)


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
    """A create's reply: `unchanged` when identical content was already there (nothing written)."""

    unchanged: bool = False


class DocumentWithContent(Document):
    content: str
    # A note an agent saved: the chunks its run had read (null for any other document).
    derived_from: list[UUID] | None = None


class Chunk(BaseModel):
    id: UUID
    ordinal: int
    heading_path: list[str]
    text: str
    start: int
    end: int


class DocumentFilters(BaseModel):
    workspace: PlainText | None = None
    tag: PlainText | None = None
    owner: UUID | None = None
    visibility: Visibility | None = None
    q: PlainText | None = Field(default=None, max_length=500)


class DocumentText(BaseModel):
    """A document's text, whole or a range of its chunks (`chunk_start`..`chunk_end`)."""

    document: Document
    chunk_start: int | None
    chunk_end: int | None
    chunk_count: int
    text: str


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
