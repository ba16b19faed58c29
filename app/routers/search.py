"""Hybrid search over every workspace the caller may see."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import (
    PRINCIPAL_ERRORS,
    AppEmbedder,
    AppSettings,
    CurrentPrincipal,
    ReplicaReads,
    WriteConn,
)
from app.errors import ValidationFailed
from app.search import service as search_service
from app.search.schemas import SearchRequest, SearchResult

router = APIRouter(prefix="/api", tags=["search"], responses=PRINCIPAL_ERRORS)


@router.post(
    "/search",
    response_model=SearchResult,
    operation_id="search",
    responses={422: ValidationFailed.openapi()},
)
async def search(
    request: SearchRequest,
    principal: CurrentPrincipal,
    conn: WriteConn,  # a search records its question
    reads: ReplicaReads,  # and ranks on the replica when one may serve the caller
    embedder: AppEmbedder,
    settings: AppSettings,
) -> SearchResult:
    """Search: dense and keyword halves fused, with each hit's ranks and matched terms."""
    return await search_service.search(
        conn, principal, embedder, settings, request, side=reads.side, reads=reads.conn
    )
