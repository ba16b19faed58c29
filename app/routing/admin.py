"""Policy administration: the effective policy as the doors show it (`GET /api/policy`,
`rag_policy`), and the admins' layer set or dropped persona by persona (audited). Read on the
request's connection, not from the snapshot: what is shown is the newest."""

from __future__ import annotations

from collections.abc import Collection

from app.access.principal import Principal
from app.audit import service as audit_service
from app.db.engine import ReadConnection, WriteConnection
from app.errors import NotFound
from app.routing import policy, queries
from app.routing.plan import read_layers
from app.routing.schemas import PersonaUpdate, Policy
from app.routing.state import RoutingState


async def effective_policy(
    conn: ReadConnection, state: RoutingState, principal: Principal, *, persona: str | None = None
) -> Policy:
    """The effective policy and the layer of each entry; one persona's with `persona`. A key
    bound to a workspace sees that workspace only, as `rag_workspaces` lists it: the personas'
    lists, the licenses and the missing workspaces name no other.

    Raises:
        Forbidden: the role may not search. NotFound: no such persona.
    """
    principal.require("search", "your role may not search")
    effective = policy.effective(await read_layers(conn, state))
    if principal.workspace_scope is not None:
        effective = _naming_only(effective, {principal.workspace_scope})
    if persona is None:
        return effective
    if persona not in effective.personas:
        raise NotFound(f"no persona named {persona!r}")
    entry = effective.personas[persona]
    return _naming_only(
        effective.model_copy(update={"personas": {persona: entry}}), entry.workspaces
    )


def _naming_only(effective: Policy, workspaces: Collection[str]) -> Policy:
    """`effective` with no workspace but `workspaces` named anywhere in it."""
    named = set(workspaces)
    return effective.model_copy(
        update={
            "personas": {
                name: entry.model_copy(
                    update={"workspaces": [w for w in entry.workspaces if w in named]}
                )
                for name, entry in effective.personas.items()
            },
            "licenses": {w: e for w, e in effective.licenses.items() if w in named},
            "missing_workspaces": [w for w in effective.missing_workspaces if w in named],
        }
    )


async def set_persona(
    conn: WriteConnection,
    state: RoutingState,
    principal: Principal,
    slug: str,
    data: PersonaUpdate,
) -> Policy:
    """Set a persona's workspaces in the admins' layer, over the file and the built-in table.

    Raises:
        Forbidden: not an admin (or a key bound to one workspace).
    """
    principal.require("policy.manage", "only admins change the routing policy")
    before = await queries.admin_personas(conn)
    workspaces = list(dict.fromkeys(data.workspaces))
    await queries.set_persona(conn, slug=slug, workspaces=workspaces, updated_by=principal.user_id)
    # Dropped here as when a persona is deleted (ADR 0011); the change notification sent at
    # commit drops it again in every process, this one included.
    state.snapshots.drop()
    await audit_service.record(
        conn,
        principal,
        "persona.set",
        target_type="persona",
        target_id=slug,
        before={"workspaces": list(before[slug])} if slug in before else None,
        after={"workspaces": workspaces},
    )
    return await effective_policy(conn, state, principal)


async def delete_persona(
    conn: WriteConnection, state: RoutingState, principal: Principal, slug: str
) -> None:
    """Drop the admins' entry for a persona, so the file's or the built-in one applies again.

    Raises:
        Forbidden: not an admin. NotFound: admins set nothing for this persona.
    """
    principal.require("policy.manage", "only admins change the routing policy")
    before = await queries.admin_personas(conn)
    if not await queries.delete_persona(conn, slug):
        raise NotFound(f"admins set no policy for persona {slug!r}")
    state.snapshots.drop()
    await audit_service.record(
        conn,
        principal,
        "persona.delete",
        target_type="persona",
        target_id=slug,
        before={"workspaces": list(before[slug])},
        after=None,
    )
