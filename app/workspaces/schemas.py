"""Shapes of workspaces (API.md, "Documents and search"): what a caller sees, what an admin
sends, and where the fan-out searches one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlsplit
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from app.kit.types import Slug, Title
from app.schemas import NoNul, PlainText, omit_null_defaults

Tier = Literal["core", "reference", "community"]

# An SPDX license id (or expression-free id such as "Apache-2.0", "CC-BY-4.0", "MIT") or the
# word PROPRIETARY.
LICENSE_PATTERN = r"^(PROPRIETARY|[A-Za-z0-9][A-Za-z0-9.+-]{0,63})$"

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


class _Input(BaseModel):
    # Unknown fields are mistakes (a typo in "licence" must not silently keep the old one).
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
