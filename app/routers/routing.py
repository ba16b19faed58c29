"""Multi-corpus routing (API.md, "Multi-corpus"): the effective policy and its admin edits, the
context block for a system prompt, and the search cache's figures."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status

from app.deps import PRINCIPAL_ERRORS, AppRouting, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Forbidden, NotFound, ValidationFailed
from app.kit.types import SLUG_PATTERN
from app.routing import admin as routing_admin
from app.routing import service as routing_service
from app.routing.schemas import (
    CacheStats,
    ContextBlock,
    ContextRequest,
    PersonaUpdate,
    Policy,
    SessionId,
    SessionMessage,
)

router = APIRouter(prefix="/api", tags=["routing"], responses=PRINCIPAL_ERRORS)

PersonaSlug = Annotated[str, Path(pattern=SLUG_PATTERN)]
SessionPath = Annotated[SessionId, Path()]


@router.get("/policy", response_model=Policy, operation_id="getPolicy")
async def get_policy(principal: CurrentPrincipal, conn: ReadConn, routing: AppRouting) -> Policy:
    """The effective routing policy, and the layer each entry came from."""
    return await routing_admin.effective_policy(conn, routing, principal)


@router.put(
    "/policy/personas/{slug}",
    response_model=Policy,
    operation_id="setPersonaPolicy",
    responses={422: ValidationFailed.openapi()},
)
async def set_persona_policy(
    slug: PersonaSlug,
    data: PersonaUpdate,
    principal: CurrentPrincipal,
    conn: WriteConn,
    routing: AppRouting,
) -> Policy:
    """Set a persona's workspaces, in priority order, over the file and the built-in table
    (admins)."""
    return await routing_admin.set_persona(conn, routing, principal, slug, data)


@router.delete(
    "/policy/personas/{slug}",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="deletePersonaPolicy",
    responses={404: NotFound.openapi()},
)
async def delete_persona_policy(
    slug: PersonaSlug, principal: CurrentPrincipal, conn: WriteConn, routing: AppRouting
) -> None:
    """Drop the admins' entry for a persona: the lower layer applies again (admins)."""
    await routing_admin.delete_persona(conn, routing, principal, slug)


# No request connection: the service reads the policy in a short transaction of its own and
# then searches each workspace in one of its own (docs/adr/0011).
@router.post(
    "/context",
    response_model=ContextBlock,
    operation_id="buildContext",
    responses={422: ValidationFailed.openapi()},
)
async def build_context(
    request: ContextRequest, principal: CurrentPrincipal, routing: AppRouting
) -> ContextBlock:
    """A context block for a system prompt, from the persona's workspaces, with its sources
    and the license footnote."""
    return await routing_service.context_block(routing, principal, request)


@router.post(
    "/context/sessions/{session_id}/message",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="rememberSessionMessage",
    responses={422: ValidationFailed.openapi()},
)
async def remember_session_message(
    session_id: SessionPath, data: SessionMessage, principal: CurrentPrincipal, routing: AppRouting
) -> None:
    """Store a session's last user message, so its context block can be asked for by session."""
    routing_service.remember_message(routing, principal, session_id, data.text)


@router.get(
    "/cache/stats",
    response_model=CacheStats,
    operation_id="getCacheStats",
    responses={403: Forbidden.openapi()},
)
async def get_cache_stats(principal: CurrentPrincipal, routing: AppRouting) -> CacheStats:
    """The search cache's figures in the process that answers (admins)."""
    return routing_service.cache_stats(routing, principal)
