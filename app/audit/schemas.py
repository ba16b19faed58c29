"""Shapes of the audit log (API.md, "People")."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, Field

from app.schemas import PlainText


class AuditEntry(BaseModel):
    id: UUID
    at: datetime
    actor_id: UUID | None
    actor_email: str | None
    action: str
    target_type: str
    target_id: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    # The agent the actor acted through: an API key, or an OAuth client (null for neither).
    agent_key_id: UUID | None = None
    agent_client_id: str | None = None


class AuditFilters(BaseModel):
    # Not extra="forbid": the query string also carries `limit` and `cursor`.
    actor: PlainText | None = Field(default=None, max_length=320)  # an account's id or email
    action: PlainText | None = Field(default=None, max_length=100)
    target: PlainText | None = Field(default=None, max_length=200)
    since: AwareDatetime | None = Field(default=None, description="Entries at or after this time.")
    until: AwareDatetime | None = Field(default=None, description="Entries before this time.")
