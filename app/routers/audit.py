"""The audit log (admins): every change to people, roles, keys and passwords."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.audit import service as audit_service
from app.audit.schemas import AuditEntry, AuditFilters
from app.deps import PRINCIPAL_ERRORS, CurrentPrincipal, ReadConn
from app.errors import Forbidden, ValidationFailed
from app.schemas import Page

router = APIRouter(prefix="/api/audit", tags=["audit"], responses=PRINCIPAL_ERRORS)


@router.get(
    "",
    response_model=Page[AuditEntry],
    operation_id="listAudit",
    responses={403: Forbidden.openapi(), 422: ValidationFailed.openapi()},
)
async def list_audit(
    principal: CurrentPrincipal,
    conn: ReadConn,
    filters: Annotated[AuditFilters, Query()],
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Page[AuditEntry]:
    """Read the audit log, newest first, filtered by actor (id or email), action or target."""
    return await audit_service.audit_log(conn, principal, filters, limit=limit, cursor=cursor)
