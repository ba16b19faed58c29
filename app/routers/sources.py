"""Sources: folders and git repositories kept in sync with a workspace (admins), their runs,
the push webhook, and where a synced document came from."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query, Request, status

from app.deps import PRINCIPAL_ERRORS, AppResources, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.schemas import Page
from app.sources import service as sources_service
from app.sources.schemas import (
    KnowledgeSource,
    Provenance,
    PushReceived,
    SourceCreate,
    SourceRun,
    SourceUpdate,
    StaleDocument,
)

router = APIRouter(tags=["sources"], responses=PRINCIPAL_ERRORS)
# The webhook answers without a credential: its signature is the credential.
webhook_router = APIRouter(tags=["sources"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    403: Forbidden.openapi(),
    404: NotFound.openapi(),
    409: Conflict.openapi(),
    422: ValidationFailed.openapi(),
}


@router.get(
    "/api/workspaces/{slug}/sources",
    response_model=Page[KnowledgeSource],
    operation_id="listSources",
    responses=_ERRORS,
)
async def list_sources(
    slug: str, principal: CurrentPrincipal, conn: ReadConn, resources: AppResources
) -> Page[KnowledgeSource]:
    """List a workspace's sources (admins)."""
    items = await sources_service.list_sources(
        conn, principal, slug, settings=resources.settings, box=resources.box
    )
    return Page[KnowledgeSource](items=items)


@router.post(
    "/api/workspaces/{slug}/sources",
    response_model=KnowledgeSource,
    status_code=status.HTTP_201_CREATED,
    operation_id="createSource",
    responses=_ERRORS,
)
async def create_source(
    slug: str,
    data: SourceCreate,
    principal: CurrentPrincipal,
    conn: WriteConn,
    resources: AppResources,
) -> KnowledgeSource:
    """Add a folder or a git repository to a workspace (admins); sync it next."""
    return await sources_service.create_source(
        conn,
        principal,
        slug,
        data,
        settings=resources.settings,
        box=resources.box,
        addresses=resources.addresses,
    )


@router.get(
    "/api/sources/stale",
    response_model=Page[StaleDocument],
    operation_id="listStaleDocuments",
    responses=_ERRORS,
)
async def list_stale_documents(
    principal: CurrentPrincipal,
    conn: ReadConn,
    workspace: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Page[StaleDocument]:
    """Synced documents that may be stale: code they name changed in later commits."""
    items = await sources_service.stale_documents(conn, principal, workspace=workspace, limit=limit)
    return Page[StaleDocument](items=items)


@router.get(
    "/api/sources/{source_id}",
    response_model=KnowledgeSource,
    operation_id="getSource",
    responses=_ERRORS,
)
async def get_source(
    source_id: UUID, principal: CurrentPrincipal, conn: ReadConn, resources: AppResources
) -> KnowledgeSource:
    """One source (admins)."""
    return await sources_service.get_source(
        conn, principal, source_id, settings=resources.settings, box=resources.box
    )


@router.patch(
    "/api/sources/{source_id}",
    response_model=KnowledgeSource,
    operation_id="updateSource",
    responses=_ERRORS,
)
async def update_source(
    source_id: UUID,
    data: SourceUpdate,
    principal: CurrentPrincipal,
    conn: WriteConn,
    resources: AppResources,
) -> KnowledgeSource:
    """Change, pause or resume a source (admins)."""
    return await sources_service.update_source(
        conn,
        principal,
        source_id,
        data,
        settings=resources.settings,
        box=resources.box,
        addresses=resources.addresses,
    )


@router.delete(
    "/api/sources/{source_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="deleteSource",
    responses=_ERRORS,
)
async def delete_source(
    source_id: UUID, principal: CurrentPrincipal, conn: WriteConn, resources: AppResources
) -> None:
    """Remove a source and the documents it synced (admins)."""
    await sources_service.delete_source(conn, principal, source_id)
    await resources.syncs.syncer.forget(source_id)


@router.post(
    "/api/sources/{source_id}/sync",
    response_model=SourceRun,
    operation_id="syncSource",
    responses=_ERRORS,
)
async def sync_source(
    source_id: UUID, principal: CurrentPrincipal, resources: AppResources
) -> SourceRun:
    """Sync a source now and answer with its run's report (admins); 409 while one runs.

    Each file is a transaction of its own, so the request holds no transaction while it syncs.
    """
    sources_service.require_manager(principal)
    return await resources.syncs.syncer.sync(source_id, "manual")


@router.get(
    "/api/sources/{source_id}/runs",
    response_model=Page[SourceRun],
    operation_id="listSourceRuns",
    responses=_ERRORS,
)
async def list_source_runs(
    source_id: UUID,
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> Page[SourceRun]:
    """A source's last runs, newest first (admins)."""
    items = await sources_service.runs(conn, principal, source_id, limit=limit)
    return Page[SourceRun](items=items)


@router.get(
    "/api/documents/{document_id}/provenance",
    response_model=Provenance | None,
    operation_id="getDocumentProvenance",
    responses={404: NotFound.openapi()},
)
async def get_document_provenance(
    document_id: UUID, principal: CurrentPrincipal, conn: ReadConn
) -> Provenance | None:
    """Where a document came from (null unless a source synced it), and whether it may be
    stale."""
    return await sources_service.provenance(conn, principal, document_id)


@webhook_router.post(
    "/api/sources/{source_id}/webhook",
    response_model=PushReceived,
    status_code=status.HTTP_202_ACCEPTED,
    operation_id="receiveSourcePush",
    responses={403: Forbidden.openapi()},
)
async def receive_push(
    source_id: UUID, request: Request, conn: ReadConn, resources: AppResources
) -> PushReceived:
    """A push webhook from GitHub (X-Hub-Signature-256), GitLab (X-Gitlab-Token) or Gitea
    (X-Gitea-Signature): a good signature starts a sync in the background; a bad one changes
    nothing (403)."""
    body = await request.body()
    start = await sources_service.check_push(
        conn, source_id, request.headers, body, box=resources.box
    )
    if start:
        resources.syncs.start(source_id, "webhook")
    return PushReceived(syncing=start)
