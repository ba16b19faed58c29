"""Signing up, in and out (API.md, "People"). The session travels in an HttpOnly cookie only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response, status

from app.auth import service as auth_service
from app.auth.schemas import LoginRequest, SignInOptions, SignupRequest
from app.deps import (
    AppHasher,
    AppSettings,
    AppSigner,
    PasswordAttempt,
    ReadConn,
    ShortTx,
    WriteConn,
    check_origin,
)
from app.errors import (
    Conflict,
    Forbidden,
    InvalidCredentials,
    RateLimited,
    SignupClosed,
    ValidationFailed,
)
from app.people.schemas import User
from app.routers.oidc import configured as oidc_configured
from app.routers.session_cookie import clear_session_cookie, set_session_cookie
from app.sessions.cookies import SESSION_COOKIE

router = APIRouter(prefix="/api/auth", tags=["auth"])

_SIGNUP_ERRORS: dict[int | str, dict[str, Any]] = {
    403: SignupClosed.openapi(),
    409: Conflict.openapi(),
    422: ValidationFailed.openapi(),
    429: RateLimited.openapi(),
}


@router.get("/options", response_model=SignInOptions, operation_id="getSignInOptions")
async def sign_in_options(conn: ReadConn, settings: AppSettings) -> SignInOptions:
    """What the sign-in screen offers: first-run setup, sign-up, single sign-on."""
    return await auth_service.sign_in_options(
        conn, open_signup=settings.open_signup, oidc=oidc_configured(settings)
    )


@router.post(
    "/signup",
    response_model=User,
    status_code=status.HTTP_201_CREATED,
    operation_id="signUp",
    responses=_SIGNUP_ERRORS,
    dependencies=[PasswordAttempt],
)
async def sign_up(
    data: SignupRequest,
    request: Request,
    response: Response,
    transaction: ShortTx,
    hasher: AppHasher,
    signer: AppSigner,
    settings: AppSettings,
) -> User:
    """Create an account and sign in: the first account becomes admin."""
    check_origin(request, settings, required=False)
    user, cookie = await auth_service.sign_up(
        transaction,
        hasher,
        signer,
        email=str(data.email),
        password=data.password,
        display_name=data.display_name,
        open_signup=settings.open_signup,
    )
    set_session_cookie(response, request, settings, cookie)
    return user


@router.post(
    "/login",
    response_model=User,
    operation_id="logIn",
    responses={
        401: InvalidCredentials.openapi(),
        403: Forbidden.openapi(),
        429: RateLimited.openapi(),
    },
    dependencies=[PasswordAttempt],
)
async def log_in(
    data: LoginRequest,
    request: Request,
    response: Response,
    transaction: ShortTx,
    hasher: AppHasher,
    signer: AppSigner,
    settings: AppSettings,
) -> User:
    """Sign in with an email and password."""
    check_origin(request, settings, required=False)
    user, cookie = await auth_service.login(
        transaction, hasher, signer, email=data.email, password=data.password
    )
    set_session_cookie(response, request, settings, cookie)
    return user


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="logOut",
    responses={403: Forbidden.openapi()},
)
async def log_out(
    request: Request, response: Response, conn: WriteConn, signer: AppSigner, settings: AppSettings
) -> None:
    """Sign out: the session ends on the server and the cookie is cleared."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        check_origin(request, settings, required=True)
    await auth_service.logout(conn, signer, cookie)
    clear_session_cookie(response, request, settings)
