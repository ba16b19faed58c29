"""The `Principal`: everything a service needs to know about the caller. A leaf: every layer may
import it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from app.access.capabilities import ALL_ACTIONS, Action, Role, allows
from app.errors import Forbidden

Kind = Literal["human", "agent"]
# What the caller presented: a browser session, an API key, an OAuth access token (MCP only),
# or nothing (the operator at the command line). Where a call came in is another thing: its
# door (`app.search.schemas.Door`, recorded with each question).
Credential = Literal["session", "api_key", "oauth", "local"]


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: a person or an agent, its role, the credential it presented, and its scope."""

    user_id: UUID | None
    email: str
    role: Role
    kind: Kind = "human"
    credential: Credential = "session"
    persona: str | None = None
    # An API key may be bound to one workspace; None means every workspace the role may see.
    workspace_scope: str | None = None
    # Set after an admin's password reset: until it is changed, only the account routes answer.
    must_change_password: bool = False
    display_name: str = ""
    # The OAuth client acting for the person (credential "oauth" only).
    client_id: str | None = None
    # The API key presented (credential "api_key" only): with `client_id`, the agent a
    # record names beside the person.
    key_id: UUID | None = None

    def can(self, action: Action) -> bool:
        """The role's grant, narrowed to one workspace's actions for a bound key."""
        return allows(self.role, action, bound=self.workspace_scope is not None)

    def actions(self) -> list[Action]:
        """Every action the caller may take, in the table's order: what it is told it may do
        (`GET /api/me`, `whoami`), never what decides (that is `require`)."""
        return [action for action in ALL_ACTIONS if self.can(action)]

    def shown(self, action: Action) -> bool:
        """Whether a reply may show the caller what only holders of `action` see (a remote
        workspace's URL, why it failed): a quiet check that narrows what is said, never whether
        something is done (that is `require`)."""
        return self.can(action)

    def require(self, action: Action, refusal: str) -> None:
        """The one check of the capability table that services make.

        Raises:
            Forbidden: the caller may not take the action (`refusal` says so to people).
        """
        if not self.can(action):
            raise Forbidden(refusal)


def require_password_changed(principal: Principal) -> Principal:
    """The caller, when it may use the product: after an admin's password reset, only the
    account's own routes (and the `whoami` tool) answer until the temporary password is
    changed. Both doors check it here.

    Raises:
        Forbidden: the password must be changed first.
    """
    if principal.must_change_password:
        raise Forbidden(
            "change your temporary password first: sign in to the web app, or POST /api/me/password"
        )
    return principal


# The command line acts as the operator: an admin who owns nothing, so what it ingests has no
# owner (API.md, `corpus ingest`).
LOCAL_ADMIN = Principal(user_id=None, email="local-admin", role="admin", credential="local")
