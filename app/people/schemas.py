"""Shapes of people and agent accounts (API.md, "People")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, EmailStr, StringConstraints

Role = Literal["viewer", "editor", "admin"]
Kind = Literal["human", "agent"]
DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]


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


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailStr
    display_name: DisplayName = ""
    role: Role
    kind: Kind = "human"
    password: str | None = None  # its rules: app.auth.passwords.check_rules
