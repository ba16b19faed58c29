"""Shapes of people and agent accounts (API.md, "People")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, EmailStr, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from app.access.capabilities import Role
from app.access.principal import Kind
from app.kit.types import Slug
from app.schemas import JsonBool, NoNul, omit_null_defaults

DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200), NoNul]
# Persona slugs are the workspace slugs' shape (the multi-corpus work defines the personas).
PersonaSlug = Slug

__all__ = ["Role", "Kind", "User", "UserCreate", "UserCreated", "UserUpdate"]


class User(BaseModel):
    id: UUID
    email: str
    display_name: str
    role: Role
    kind: Kind
    active: bool
    locked: bool
    dormant: bool
    last_seen_at: datetime | None
    created_at: datetime
    persona: str | None = None


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailStr
    display_name: DisplayName = ""
    role: Role
    kind: Kind = "human"
    password: str | None = Field(default=None, max_length=1000)  # rules: app.people.passwords


class UserCreated(User):
    """A new account; `temporary_password` is set (once) when no password was given."""

    temporary_password: str | None = None


class UserUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=omit_null_defaults)

    # Leave a field out to keep it. Only `persona` takes null (no default persona); the others
    # are documented without null, and the service refuses an explicit one.
    role: Role | SkipJsonSchema[None] = None
    active: JsonBool | SkipJsonSchema[None] = None
    display_name: DisplayName | SkipJsonSchema[None] = None
    persona: PersonaSlug | None = None


class TemporaryPassword(BaseModel):
    temporary_password: str
