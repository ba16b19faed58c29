"""What the consent screen and the connected-apps list show (API.md, "OAuth")."""

from __future__ import annotations

from datetime import datetime
from typing import Required, TypedDict

from pydantic import BaseModel, ConfigDict

from app.access.capabilities import McpTool, Role
from app.schemas import JsonBool


class ClientMetadata(TypedDict, total=False):
    """A client's RFC 7591 registration as JSON (the SDK's `OAuthClientInformationFull`
    dumped), stored in `oauth_clients.metadata` without its secret, which is sealed beside it;
    `oauth.get_client` puts the secret back, unsealed."""

    client_id: Required[str]
    client_secret: str | None
    client_id_issued_at: int | None
    client_secret_expires_at: int | None
    redirect_uris: list[str] | None
    token_endpoint_auth_method: str | None
    grant_types: list[str]
    response_types: list[str]
    scope: str | None
    client_name: str | None
    client_uri: str | None
    logo_uri: str | None
    contacts: list[str] | None
    tos_uri: str | None
    policy_uri: str | None
    jwks_uri: str | None
    jwks: object
    software_id: str | None
    software_version: str | None
    application_type: str | None
    issuer: str | None


class ConsentRequest(BaseModel):
    """What a consent screen shows (API.md, "OAuth")."""

    client_id: str
    client_name: str
    # Always true: a dynamically registered client names itself, and nobody vouches for it.
    client_name_self_declared: bool
    # A client whose client_id is the URL of its metadata document (CIMD): the host that
    # serves it, checked by fetching it. None for a dynamically registered client.
    verified_domain: str | None = None
    redirect_host: str
    redirect_uri: str  # where the browser goes with the answer
    scopes: list[str]
    resource: str | None
    role: Role  # the token will carry exactly this person's role
    tools: list[McpTool]


class ConsentAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    approve: JsonBool


class ConsentRedirect(BaseModel):
    redirect_to: str


class Connection(BaseModel):
    client_id: str
    client_name: str
    verified_domain: str | None = None  # as on the consent screen
    redirect_hosts: list[str]
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None


class ConnectionList(BaseModel):
    items: list[Connection]
