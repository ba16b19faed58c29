"""A request's plan: the policy's layers as this process sees them, the persona the request
runs as, the workspaces it searches in what order, and the rows of those the caller may see."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.access.principal import Principal
from app.db.engine import ReadConnection
from app.routing import policy, queries
from app.routing.policy import Layers, Route
from app.routing.state import RoutingState
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceTarget


@dataclass(frozen=True, slots=True)
class Plan:
    layers: Layers
    persona: str | None
    route: Route
    targets: dict[str, WorkspaceTarget]  # the workspaces the caller may search, by slug


def layers(
    state: RoutingState,
    admin: Mapping[str, tuple[str, ...]],
    workspaces: Mapping[str, str | None],
) -> Layers:
    """The layers over the admins' personas and the workspaces' own licenses."""
    return Layers(
        mode=state.settings.routing_mode,
        default_persona=state.settings.default_persona or None,
        file=state.file,
        admin=admin,
        workspaces=workspaces,
    )


async def read_layers(conn: ReadConnection, state: RoutingState) -> Layers:
    """The layers read now on `conn`, not from the snapshot: for what shows the policy."""
    return layers(
        state,
        await queries.admin_personas(conn),
        await workspaces_service.workspace_licenses(conn),
    )


async def planned(
    state: RoutingState, principal: Principal, persona: str | None, *, named: Sequence[str] = ()
) -> Plan:
    """The request's plan, from the policy snapshot. A workspace the caller `named` that the
    snapshot lacks may have been created since it was taken (its notification still on the
    way): read again before calling it unknown.

    Raises:
        ValidationFailed: an explicit persona no layer knows.
    """
    snapshot = await state.snapshots.read(state.db)
    known = {t.slug for t in snapshot.targets}
    if any(slug not in known for slug in named):
        snapshot = await state.snapshots.read(state.db, fresh=True)
    current = layers(state, snapshot.admin, {t.slug: t.license for t in snapshot.targets})
    # The personas only: the whole effective policy (every license) is not needed per request.
    personas = policy.personas(current)
    resolved = policy.resolve_persona(
        personas, explicit=persona, bound=principal.persona, default=current.default_persona
    )
    targets = {t.slug: t for t in workspaces_service.searchable(principal, snapshot.targets)}
    route = policy.route(current, resolved, list(targets), merged=personas)
    return Plan(current, resolved, route, targets)
