"""The session cookie's attributes, in one place: HttpOnly (no script reads it), SameSite=Lax
(other sites' forms and fetches do not carry it on writes), Secure behind https, and an expiry
that matches the session row's."""

from __future__ import annotations

from fastapi import Request, Response

from app.config import Settings
from app.sessions.cookies import SESSION_COOKIE, SESSION_MAX_AGE_S


def _secure(request: Request, settings: Settings) -> bool:
    return settings.public_url.startswith("https://") or request.url.scheme == "https"


def set_session_cookie(
    response: Response, request: Request, settings: Settings, value: str
) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=SESSION_MAX_AGE_S,
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request, settings),
    )


def clear_session_cookie(response: Response, request: Request, settings: Settings) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=_secure(request, settings)
    )
