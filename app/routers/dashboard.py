"""The dashboard: figures, 30 days of use, composition, agents' activity, the activity feed, and
dismissing a documentation gap (the gaps themselves are `GET /api/gaps`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.dashboard import service as dashboard_service
from app.dashboard.schemas import Activity, Dashboard, GapDismissal
from app.deps import PRINCIPAL_ERRORS, AppEmbedder, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Forbidden, NotFound, ValidationFailed

router = APIRouter(prefix="/api", tags=["dashboard"], responses=PRINCIPAL_ERRORS)


@router.get("/dashboard", response_model=Dashboard, operation_id="getDashboard")
async def get_dashboard(principal: CurrentPrincipal, conn: ReadConn) -> Dashboard:
    """The corpus at a glance: figures, the last 30 days, composition and agents' activity."""
    return await dashboard_service.dashboard(conn, principal)


@router.get("/dashboard/activity", response_model=Activity, operation_id="getActivity")
async def get_activity(
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=100)] = 30,
) -> Activity:
    """The latest uploads, edits, questions, sign-ins and keys minted that you may see."""
    return await dashboard_service.activity(conn, principal, limit=limit)


@router.post(
    "/gaps/dismiss",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    operation_id="dismissGap",
    responses={
        403: Forbidden.openapi(),
        404: NotFound.openapi(),
        422: ValidationFailed.openapi(),
    },
)
async def dismiss_gap(
    dismissal: GapDismissal, principal: CurrentPrincipal, conn: WriteConn, embedder: AppEmbedder
) -> None:
    """Dismiss a documentation gap until one of its questions is asked again."""
    await dashboard_service.dismiss_gap(conn, principal, embedder, dismissal)
