"""Signing in with OpenID Connect (API.md, "People"), through authlib's Starlette client: the
authorization code flow with PKCE (S256) and a nonce, the ID token checked against the
provider's keys, issuer and our client id.

Both routes are browser navigations, so a failed sign-in sends the browser back to the sign-in
page rather than ending on a JSON body: `/login?error=oidc` when the exchange with the provider
fails (an error from it, a state that does not match this browser's, a token that does not
verify), `/login?error=oidc_forbidden` when the person may not sign in here. When OIDC is not
configured both routes answer 404 `not_found`.

Nothing here logs a token, a code or a claim; a refusal logs the email's domain only.
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any

import httpx
from authlib.common.errors import AuthlibBaseError  # type: ignore[import-untyped]  # no py.typed
from authlib.integrations.starlette_client import (  # type: ignore[import-untyped]  # no py.typed
    OAuth,
    StarletteOAuth2App,
)
from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import RedirectResponse
from joserfc.errors import JoseError

from app.auth import service as auth_service
from app.config import Settings
from app.deps import AppResources, AppSettings, AppSigner, WriteConn
from app.errors import AppError, Conflict, Forbidden, NotFound
from app.routers.session_cookie import set_session_cookie

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/api/auth/oidc", tags=["auth"])

LOGIN_PATH = "/api/auth/oidc/login"
CALLBACK_PATH = "/api/auth/oidc/callback"
# authlib keeps the flow's state, nonce and PKCE verifier in `request.session`: Starlette's
# SessionMiddleware, under a cookie of its own that only these routes receive, and that lives
# no longer than a sign-in may take.
STATE_COOKIE = "corpus_oidc"
STATE_COOKIE_PATH = "/api/auth/oidc"
STATE_MAX_AGE_S = 600

# What talking to the provider can raise: its error replies and a state that does not match
# (authlib), an ID token that does not verify (joserfc), an unreachable provider or a reply
# that is not JSON (httpx, ValueError).
_PROVIDER_ERRORS = (AuthlibBaseError, JoseError, httpx.HTTPError, ValueError)
_PLAIN_CODE = re.compile(r"^[a-z_]{1,40}$")


class OidcSignInFailed(AppError):
    """The sign-in with the identity provider failed; the browser goes back to the sign-in page.

    An error rather than a returned redirect, so that the request's transaction rolls back.
    """

    status = 303
    code = "oidc"

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"Location": f"/login?error={self.code}"})


class OidcSignInRefused(OidcSignInFailed):
    """The identity provider vouched for a person who may not sign in here."""

    code = "oidc_forbidden"


def configured(settings: Settings) -> bool:
    """OpenID Connect is on once an issuer and a client id are set."""
    return bool(settings.oidc_issuer and settings.oidc_client_id)


def make_client(settings: Settings) -> StarletteOAuth2App | None:
    """The provider's client, for the lifespan to keep; None when OIDC is off. The provider's
    metadata is fetched at the first sign-in, so a provider that is down does not stop start-up.
    """
    if not configured(settings):
        return None
    # authlib logs each sign-in's PKCE verifier at DEBUG; keep it out of a DEBUG log.
    authlib_logger = logging.getLogger("authlib")
    authlib_logger.setLevel(max(logging.INFO, logging.getLogger().getEffectiveLevel()))
    secret = settings.oidc_client_secret
    return OAuth().register(
        name="oidc",
        client_id=settings.oidc_client_id,
        client_secret=secret.get_secret_value() if secret else None,
        server_metadata_url=f"{settings.oidc_issuer}/.well-known/openid-configuration",
        client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"},
    )


async def _client(resources: AppResources) -> StarletteOAuth2App:
    """Raises:
    NotFound: OpenID Connect is not configured.
    """
    if resources.oidc is None:
        raise NotFound("sign-in with OpenID Connect is not configured")
    return resources.oidc


OidcClient = Annotated[StarletteOAuth2App, Depends(_client)]


def _claims_options(settings: Settings) -> dict[str, Any]:
    # authlib checks `iss` against the metadata document only and accepts any `aud` with our id
    # in `azp`; pin both to the configuration. Settings drop a trailing slash from the issuer,
    # which some providers include in `iss`.
    issuer = settings.oidc_issuer
    return {
        "iss": {"essential": True, "values": [issuer, f"{issuer}/"]},
        "aud": {"essential": True, "value": settings.oidc_client_id},
    }


def _failure(exc: Exception) -> str:
    # The kind of failure and a plain error code only: messages may quote the provider's reply,
    # and the code of an `error` parameter is whatever the caller of our callback put there.
    code = getattr(exc, "error", None)
    if isinstance(code, str) and _PLAIN_CODE.match(code):
        return f"{type(exc).__name__} ({code})"
    return type(exc).__name__


@router.get(
    "/login",
    response_class=RedirectResponse,
    status_code=status.HTTP_302_FOUND,
    operation_id="oidcLogin",
    responses={303: OidcSignInFailed.openapi(), 404: NotFound.openapi()},
)
async def oidc_login(
    request: Request, client: OidcClient, settings: AppSettings
) -> RedirectResponse:
    """Start signing in with OpenID Connect: redirects to the identity provider."""
    try:
        # The state, nonce and PKCE verifier go into the state cookie, for the callback.
        response: RedirectResponse = await client.authorize_redirect(
            request, f"{settings.public_url}{CALLBACK_PATH}"
        )
    except _PROVIDER_ERRORS as exc:
        logger.warning("OpenID Connect sign-in could not start: %s", _failure(exc))
        raise OidcSignInFailed("the identity provider could not be reached") from None
    return response


@router.get(
    "/callback",
    response_class=RedirectResponse,
    status_code=status.HTTP_303_SEE_OTHER,
    operation_id="oidcCallback",
    responses={404: NotFound.openapi()},
)
async def oidc_callback(
    request: Request,
    client: OidcClient,
    conn: WriteConn,
    signer: AppSigner,
    settings: AppSettings,
) -> RedirectResponse:
    """Finish signing in with OpenID Connect: signs the person in and redirects to `/`."""
    try:
        token = await client.authorize_access_token(
            request, claims_options=_claims_options(settings)
        )
    except _PROVIDER_ERRORS as exc:
        logger.warning("OpenID Connect sign-in failed: %s", _failure(exc))
        raise OidcSignInFailed("the sign-in with the identity provider failed") from None
    claims = token.get("userinfo") or {}
    email, subject = claims.get("email"), claims.get("sub")
    if not isinstance(email, str) or not isinstance(subject, str):
        logger.warning("OpenID Connect sign-in failed: no ID token, or one without email or sub")
        raise OidcSignInFailed("the identity provider sent no email address")
    verified = claims.get("email_verified")
    name = claims.get("name")
    try:
        _user, cookie = await auth_service.oidc_sign_in(
            conn,
            signer,
            email=email,
            # Some providers send the flag as a string.
            email_verified=verified is True or verified == "true",
            subject=subject,
            display_name=name if isinstance(name, str) else "",
            allowed_domains=settings.oidc_allowed_domains,
            default_role=settings.oidc_default_role,
        )
    except Forbidden:
        logger.info("OpenID Connect sign-in refused (domain %s)", email.rpartition("@")[2])
        raise OidcSignInRefused("this person may not sign in here") from None
    except Conflict:
        raise OidcSignInFailed("the account is being created by another sign-in") from None
    response = RedirectResponse("/", status_code=status.HTTP_303_SEE_OTHER)
    set_session_cookie(response, request, settings, cookie)
    return response
