"""Workspaces: where documents live, each with a license and a tier."""

from __future__ import annotations

from fastapi import APIRouter, status

from app.deps import PRINCIPAL_ERRORS, AppResources, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.schemas import Page
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import Workspace, WorkspaceCreate, WorkspaceUpdate

router = APIRouter(prefix="/api/workspaces", tags=["workspaces"], responses=PRINCIPAL_ERRORS)


@router.get("", response_model=Page[Workspace], operation_id="listWorkspaces")
async def list_workspaces(principal: CurrentPrincipal, conn: ReadConn) -> Page[Workspace]:
    """List the workspaces (a remote one's URL for admins only)."""
    items = await workspaces_service.list_workspaces(conn, principal)
    return Page[Workspace](items=items)


@router.post(
    "",
    response_model=Workspace,
    status_code=status.HTTP_201_CREATED,
    operation_id="createWorkspace",
    responses={403: Forbidden.openapi(), 409: Conflict.openapi(), 422: ValidationFailed.openapi()},
)
async def create_workspace(
    data: WorkspaceCreate, principal: CurrentPrincipal, conn: WriteConn, resources: AppResources
) -> Workspace:
    """Create a workspace (admins); a remote one names its base URL and bearer."""
    return await workspaces_service.create_workspace(
        conn, principal, data, box=resources.box, addresses=resources.addresses
    )


@router.patch(
    "/{slug}",
    response_model=Workspace,
    operation_id="updateWorkspace",
    responses={
        403: Forbidden.openapi(),
        404: NotFound.openapi(),
        422: ValidationFailed.openapi(),
    },
)
async def update_workspace(
    slug: str,
    data: WorkspaceUpdate,
    principal: CurrentPrincipal,
    conn: WriteConn,
    resources: AppResources,
) -> Workspace:
    """Change a workspace's title, description, license, tier or remote endpoint (admins)."""
    return await workspaces_service.update_workspace(
        conn, principal, slug, data, box=resources.box, addresses=resources.addresses
    )


@router.delete(
    "/{slug}",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="deleteWorkspace",
    responses={403: Forbidden.openapi(), 404: NotFound.openapi(), 409: Conflict.openapi()},
)
async def delete_workspace(slug: str, principal: CurrentPrincipal, conn: WriteConn) -> None:
    """Delete an empty workspace (admins); one with documents or unrevoked keys is a 409."""
    await workspaces_service.delete_workspace(conn, principal, slug)
