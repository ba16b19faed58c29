"""The `Principal`: everything a service needs to know about the caller. A leaf: every layer may
import it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

Role = Literal["viewer", "editor", "admin"]
Kind = Literal["human", "agent"]
Door = Literal["session", "api_key", "oauth", "local"]

_RANK: dict[Role, int] = {"viewer": 0, "editor": 1, "admin": 2}


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: a person or an agent, its role, how it connected, and its scope."""

    user_id: UUID | None
    email: str
    role: Role
    kind: Kind = "human"
    door: Door = "session"
    persona: str | None = None
    # An API key may be bound to one workspace; None means every workspace the role may see.
    workspace_scope: str | None = None

    def at_least(self, role: Role) -> bool:
        return _RANK[self.role] >= _RANK[role]

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


# The stand-in of the routes until people and sessions exist (and of the CLI, which acts as the
# operator): an admin who owns nothing, so its documents have no owner.
LOCAL_ADMIN = Principal(user_id=None, email="local-admin", role="admin", door="local")
