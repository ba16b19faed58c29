"""The Anvil-compatible knowledge search (API.md, "Multi-corpus"): one workspace per call, taken
from the API key as Anvil takes it from the bearer, or one key and an allowlist."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import PRINCIPAL_ERRORS, AppRouting, CurrentPrincipal
from app.errors import BadRequest, ValidationFailed
from app.routing import service as routing_service
from app.routing.schemas import KnowledgeResults, KnowledgeSearch, KnowledgeSearchMulti

router = APIRouter(prefix="/v1/knowledge", tags=["knowledge"], responses=PRINCIPAL_ERRORS)


@router.post(
    "/search",
    response_model=KnowledgeResults,
    operation_id="knowledgeSearch",
    responses={400: BadRequest.openapi(), 422: ValidationFailed.openapi()},
)
async def knowledge_search(
    request: KnowledgeSearch, principal: CurrentPrincipal, routing: AppRouting
) -> KnowledgeResults:
    """Search the API key's workspace (400 for a credential bound to none)."""
    return await routing_service.knowledge_search(routing, principal, request)


@router.post(
    "/search-multi",
    response_model=KnowledgeResults,
    operation_id="knowledgeSearchMulti",
    responses={422: ValidationFailed.openapi()},
)
async def knowledge_search_multi(
    request: KnowledgeSearchMulti, principal: CurrentPrincipal, routing: AppRouting
) -> KnowledgeResults:
    """Search an allowlist of workspaces at once; one that cannot be searched is a failure."""
    return await routing_service.knowledge_search_multi(routing, principal, request)
