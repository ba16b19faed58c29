"""API keys (admins): minted for an account, shown once, revoked at will."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, status

from app.auth import service as auth_service
from app.auth.schemas import ApiKeyCreate, ApiKeyCreated, ApiKeyList
from app.deps import PRINCIPAL_ERRORS, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Forbidden, NotFound, ValidationFailed

router = APIRouter(prefix="/api/keys", tags=["keys"], responses=PRINCIPAL_ERRORS)

_ERRORS: dict[int | str, dict[str, Any]] = {
    403: Forbidden.openapi(),
    404: NotFound.openapi(),
    422: ValidationFailed.openapi(),
}


@router.get("", response_model=ApiKeyList, operation_id="listKeys", responses=_ERRORS)
async def list_keys(principal: CurrentPrincipal, conn: ReadConn) -> ApiKeyList:
    """List every API key (never its secret), revoked ones included."""
    return ApiKeyList(items=await auth_service.list_keys(conn, principal))


@router.post(
    "",
    response_model=ApiKeyCreated,
    status_code=status.HTTP_201_CREATED,
    operation_id="createKey",
    responses=_ERRORS,
)
async def create_key(
    data: ApiKeyCreate, principal: CurrentPrincipal, conn: WriteConn
) -> ApiKeyCreated:
    """Mint an API key for an account; the key is in this reply only."""
    return await auth_service.create_key(conn, principal, data)


@router.delete(
    "/{key_id}", status_code=status.HTTP_204_NO_CONTENT, operation_id="revokeKey", responses=_ERRORS
)
async def revoke_key(key_id: UUID, principal: CurrentPrincipal, conn: WriteConn) -> None:
    """Revoke a key: its next request is refused."""
    await auth_service.revoke_key(conn, principal, key_id)
