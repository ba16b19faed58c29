"""Shapes of signing in, the caller's own account, and API keys (API.md, "People")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, EmailStr, Field, StringConstraints

from app.access.capabilities import Action, McpTool, Role
from app.access.principal import Kind
from app.kit.types import Slug
from app.people.schemas import DisplayName, PersonaSlug
from app.schemas import NoNul

# Long enough for any password the rules accept; a cap keeps a megabyte body from costing CPU.
Password = Annotated[str, Field(max_length=1000)]


class SignupRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailStr
    password: Password
    display_name: DisplayName = ""


class SignInOptions(BaseModel):
    """What the sign-in screen offers: the first-run setup, sign-up, single sign-on."""

    first_run: bool
    signup_open: bool
    oidc: bool


class LoginRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Not EmailStr: a malformed address is a failed sign-in like any other.
    email: Annotated[str, StringConstraints(strip_whitespace=True, max_length=320), NoNul]
    password: Password


class PasswordChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current_password: Password
    new_password: Password


class Me(BaseModel):
    id: UUID
    email: str
    display_name: str
    role: Role
    kind: Kind
    persona: str | None
    tools: list[McpTool]
    must_change_password: bool
    # The capability table's actions the caller may take (a bound key's narrowed to its
    # workspace), in the table's order: what the web app offers follows from them.
    actions: list[Action]


KeyName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), NoNul
]


class ApiKey(BaseModel):
    id: UUID
    name: str
    prefix: str
    user_id: UUID
    email: str
    workspace: str | None
    persona: str | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ApiKeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UUID
    name: KeyName
    workspace: Slug | None = None
    persona: PersonaSlug | None = None


class ApiKeyCreated(ApiKey):
    """A new key; `key` is shown this once and never again."""

    key: str


class ApiKeyList(BaseModel):
    items: list[ApiKey]
