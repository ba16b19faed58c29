"""The caller's own account."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from app.auth import service as auth_service
from app.auth.schemas import Me, PasswordChange
from app.deps import (
    SIGNED_IN_ERRORS,
    AppHasher,
    AppSettings,
    AppSigner,
    PasswordAttempt,
    ShortTx,
    SignedIn,
)
from app.errors import Forbidden, InvalidCredentials, RateLimited, ValidationFailed
from app.routers.session_cookie import set_session_cookie

router = APIRouter(prefix="/api/me", tags=["me"], responses=SIGNED_IN_ERRORS)


@router.get("", response_model=Me, operation_id="getMe")
async def get_me(principal: SignedIn) -> Me:
    """Who the caller is, the MCP tools its role allows, and the actions it may take."""
    return auth_service.me(principal)


@router.post(
    "/password",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="changePassword",
    responses={
        401: InvalidCredentials.openapi(),
        403: Forbidden.openapi(),
        422: ValidationFailed.openapi(),
        429: RateLimited.openapi(),
    },
    dependencies=[PasswordAttempt],
)
async def change_password(
    data: PasswordChange,
    principal: SignedIn,
    request: Request,
    response: Response,
    transaction: ShortTx,
    hasher: AppHasher,
    signer: AppSigner,
    settings: AppSettings,
) -> None:
    """Change one's own password, signed in with a session (not a key); every other session of
    the account ends."""
    cookie = await auth_service.change_password(transaction, hasher, signer, principal, data)
    set_session_cookie(response, request, settings, cookie)
