"""What the consent screen and the connected-apps list show (API.md, "OAuth")."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from app.access.capabilities import McpTool, Role
from app.schemas import JsonBool


class ConsentRequest(BaseModel):
    """What a consent screen shows (API.md, "OAuth")."""

    client_id: str
    client_name: str
    # Always true: a dynamically registered client names itself, and nobody vouches for it.
    client_name_self_declared: bool
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
    redirect_hosts: list[str]
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None


class ConnectionList(BaseModel):
    items: list[Connection]
