"""People administration (admins): accounts, roles, passwords, enable and disable, unlock."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query, status

from app.deps import PRINCIPAL_ERRORS, AppHasher, CurrentPrincipal, ReadConn, WriteConn
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.people import service as people_service
from app.people.schemas import TemporaryPassword, User, UserCreate, UserCreated, UserUpdate
from app.schemas import Page

router = APIRouter(prefix="/api/people", tags=["people"], responses=PRINCIPAL_ERRORS)

_ERRORS: dict[int | str, dict[str, Any]] = {
    403: Forbidden.openapi(),
    404: NotFound.openapi(),
    409: Conflict.openapi(),
    422: ValidationFailed.openapi(),
}


@router.get("", response_model=Page[User], operation_id="listPeople", responses=_ERRORS)
async def list_people(
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Page[User]:
    """List people and agents with their role, last activity, and locked and dormant flags."""
    return await people_service.list_people(conn, principal, limit=limit, cursor=cursor)


@router.post(
    "",
    response_model=UserCreated,
    status_code=status.HTTP_201_CREATED,
    operation_id="createPerson",
    responses=_ERRORS,
)
async def create_person(
    data: UserCreate, principal: CurrentPrincipal, conn: WriteConn, hasher: AppHasher
) -> UserCreated:
    """Add a person or an agent; without a password, a person gets a temporary one (shown once)."""
    return await people_service.add_person(conn, hasher, principal, data)


@router.patch("/{user_id}", response_model=User, operation_id="updatePerson", responses=_ERRORS)
async def update_person(
    user_id: UUID, data: UserUpdate, principal: CurrentPrincipal, conn: WriteConn
) -> User:
    """Change a role, enable or disable, rename, or set the default persona."""
    return await people_service.update_person(conn, principal, user_id, data)


@router.post(
    "/{user_id}/reset-password",
    response_model=TemporaryPassword,
    operation_id="resetPassword",
    responses=_ERRORS,
)
async def reset_password(
    user_id: UUID, principal: CurrentPrincipal, conn: WriteConn, hasher: AppHasher
) -> TemporaryPassword:
    """Give a person a temporary password, to be changed at the next sign-in."""
    temporary = await people_service.reset_password(conn, hasher, principal, user_id)
    return TemporaryPassword(temporary_password=temporary)


@router.post(
    "/{user_id}/unlock", response_model=User, operation_id="unlockPerson", responses=_ERRORS
)
async def unlock_person(user_id: UUID, principal: CurrentPrincipal, conn: WriteConn) -> User:
    """Lift a sign-in lock before it runs out."""
    return await people_service.unlock(conn, principal, user_id)
