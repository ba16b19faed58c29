"""Pure ASGI middleware (no BaseHTTPMiddleware: it breaks streaming and context variables)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.middleware.sessions import SessionMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.db.availability import DATABASE_UNREACHABLE, unreachable
from app.errors import error_body, oauth_error_body
from app.logs import Caller, event, request_caller, request_id
from app.observe import metrics, tracing

logger = logging.getLogger("corpus.access")
unavailable_logger = logging.getLogger("corpus.unavailable")

REQUEST_ID_HEADER = "x-request-id"
# An id a proxy sent is kept when it is short and plain; anything else could forge log lines.
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
# RFC 3986's characters allowed in a path as they are; everything else (controls, spaces, `%`,
# non-ASCII) is percent-encoded in the access line.
_PATH_SAFE = "/:@!$&'()*+,;="


class RequestIdMiddleware:
    """Gives every request an id (the caller's `X-Request-ID` when sane), puts it in the logs and
    the response headers, and writes one access line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        rid = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        token = request_id.set(rid)
        caller = Caller()
        caller_token = request_caller.set(caller)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append(REQUEST_ID_HEADER, rid)
            await send(message)

        method = scope["method"]
        traced = tracing.span(method, {"http.request.method": method, "corpus.request_id": rid})
        try:
            with tracing.incoming(scope["headers"]), traced as current:
                try:
                    await self.app(scope, receive, send_with_id)
                finally:
                    # The route's template, never the path: a path may name a document or a
                    # consent transaction, and the query string may carry codes.
                    route = route_template(scope)
                    current.update_name(f"{method} {route}")
                    tracing.set_attributes(
                        current,
                        {
                            "http.route": route,
                            "http.response.status_code": status,
                            "corpus.principal_id": caller.id,
                            "corpus.principal_kind": caller.kind,
                        },
                    )
        finally:
            elapsed = time.perf_counter() - started
            # The path only: query strings may carry codes or tokens (OAuth redirects). Written
            # as a URL, so that no byte a client put in it can end the line or fake another.
            path = quote(scope["path"], safe=_PATH_SAFE)
            route = route_template(scope)
            metrics.REQUEST_SECONDS.labels(scope["method"], route, str(status)).observe(elapsed)
            event(
                logger,
                "%s %s %d %.1fms",
                scope["method"],
                path,
                status,
                elapsed * 1000,
                method=scope["method"],
                path=path,
                route=route,
                status=status,
                duration_ms=round(elapsed * 1000, 1),
                principal_id=caller.id,
                principal_kind=caller.kind,
                credential=caller.credential,
            )
            request_caller.reset(caller_token)
            request_id.reset(token)


def route_template(scope: Scope) -> str:
    """The template of the route that served the request (`/api/documents/{document_id}`), a
    bounded set fit for a metric's label; "unmatched" when no route did."""
    route = scope.get("route")
    template = getattr(route, "path_format", None) or getattr(route, "path", None)
    return template if isinstance(template, str) and template else "unmatched"


# How long a client should wait before trying again while the database is unreachable.
RETRY_AFTER_S = 5


class UnavailableMiddleware:
    """A database that cannot be reached is a 503 `unavailable` with `Retry-After` (an RFC 6749
    `temporarily_unavailable` at the OAuth routes), not a 500: whatever the request was, it may
    succeed later, and the pool reconnects by itself once PostgreSQL is back.

    Pure ASGI, so that it serves the MCP SDK's Starlette app as well as ours: each has its own
    error middleware, which would answer a plain-text 500 first."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as error:
            if started or not unreachable(error):
                raise
            unavailable_logger.warning("database unreachable: %s", _one_line(error))
            message = DATABASE_UNREACHABLE
            content: dict[str, Any]
            if scope["path"] in OAUTH_PATHS:
                content = oauth_error_body("temporarily_unavailable", message)
            else:
                content = error_body("unavailable", message)
            headers = {"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"}
            await JSONResponse(content, status_code=503, headers=headers)(scope, receive, send)


def _one_line(error: BaseException) -> str:
    """The error's type and its driver's, never its message: SQLAlchemy's quotes the
    statement's parameters, which may be a caller's data."""
    if isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    cause = getattr(error, "orig", None) or error.__cause__
    return type(error).__name__ + (f" ({type(cause).__name__})" if cause is not None else "")


class NulPathMiddleware:
    """A path with a NUL byte names nothing we serve: no slug, id or file name can hold one, and
    PostgreSQL's text and the file system refuse it (with a 500, were it let through). One rule
    here, before routing, instead of one per parameter: a JSON 404."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "\x00" in scope["path"]:
            content = error_body("not_found", "no resource has a NUL in its path")
            await JSONResponse(content, status_code=404)(scope, receive, send)
            return
        await self.app(scope, receive, send)


# --- request body limits ----------------------------------------------------------------------

# The form's own bytes around an uploaded file (boundaries, part headers, the other fields), and
# the JSON-RPC envelope around a base64 upload at /mcp.
ENVELOPE_BYTES = 64 * 1024
# A token, revocation, authorization or registration request is a few fields (RFC 6749, RFC
# 7591); the OAuth edge reads these bodies before the SDK does, so they are held small.
MAX_OAUTH_REQUEST_BYTES = 64 * 1024
# The OAuth routes answer with RFC 6749 error objects, not API.md's shape (RFC 7591's code at
# registration).
OAUTH_PATHS = frozenset({"/token", "/register", "/revoke", "/authorize"})


@dataclass(frozen=True)
class BodyLimit:
    """How many bytes a request body may have, and what to tell a caller who sends more."""

    max_bytes: int
    described: str  # "20 MB (CORPUS_MAX_UPLOAD_MB)": the limit, and the setting that moves it


def body_limit(settings: Settings, method: str, path: str) -> BodyLimit:
    """The limit of one request's body: uploads where documents come in, small elsewhere."""
    upload = f"{settings.max_upload_mb} MB (CORPUS_MAX_UPLOAD_MB)"
    if (method == "POST" and path == "/api/documents") or (
        method == "PATCH" and path.startswith("/api/documents/")
    ):
        # A file in a form, or a document's text in JSON.
        return BodyLimit(settings.max_upload_bytes + ENVELOPE_BYTES, upload)
    if path == "/mcp":
        # `upload_document` carries a file as base64: 4 bytes for every 3.
        encoded = -(-settings.max_upload_bytes * 4 // 3)
        return BodyLimit(encoded + ENVELOPE_BYTES, f"{upload}, base64-encoded")
    if path in OAUTH_PATHS:
        return BodyLimit(MAX_OAUTH_REQUEST_BYTES, "64 KiB")
    return BodyLimit(settings.max_json_kb * 1024, f"{settings.max_json_kb} KB (CORPUS_MAX_JSON_KB)")


class _BodyTooLarge(Exception):
    """Unwinds the app once the 413 has been sent in its stead."""


# Before an answer given ahead of the body's end, this much of the rest is read and dropped, so
# that a client still sending a modest body gets the answer: closing a socket with unread data
# resets the connection, and the client may lose the answer with it. Past these bounds, the
# connection is closed.
DRAIN_BYTES = 1024 * 1024
DRAIN_SECONDS = 2.0


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding":
            return True
        if name == b"content-length":
            return bool(value != b"0")
    return False


class _Body:
    """One request's body as the app reads it: counted, and cut off at the limit."""

    def __init__(self, scope: Scope, receive: Receive, limit: BodyLimit) -> None:
        self.receive = receive
        self.limit = limit
        self.received = 0
        self.unread = _has_body(scope)
        self.declared = _declared_length(scope)

    async def read(self) -> Message:
        message = await self.receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            self.unread = message.get("more_body", False)
        else:
            self.unread = False
        return message

    @property
    def over(self) -> bool:
        return self.received > self.limit.max_bytes

    async def drain(self) -> bool:
        """Read and drop what is left, within bounds; True when nothing is left unread."""
        if (self.declared or 0) - self.received > DRAIN_BYTES:
            return False  # too much is left: not worth waiting for
        dropped = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_SECONDS):
                while self.unread and dropped < DRAIN_BYTES:
                    before = self.received
                    await self.read()
                    dropped += self.received - before
        return not self.unread


class BodyLimitMiddleware:
    """Bounds every request body while it is read: a declared `Content-Length` over the limit is
    refused before the app runs; a streamed (chunked) body is cut off as soon as it passes the
    limit, and the app, which may be anywhere in its reading (FastAPI's JSON, a multipart
    parser, the MCP SDK), is unwound. Either way the answer is a 413 naming the limit.

    An answer given before the body was read in full (a 413, a 403 before an upload) closes the
    connection unless the rest is short: otherwise the server would go on reading it to find the
    next request, and a caller could make it take in any number of bytes it refused."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = body_limit(self.settings, scope["method"], scope["path"])
        body = _Body(scope, receive, limit)
        if body.declared is not None and body.declared > limit.max_bytes:
            await self._refuse(scope, send, body)
            return
        refused = False
        started = False

        async def limited_receive() -> Message:
            nonlocal refused
            message = await body.read()
            if body.over:
                if not started:
                    refused = True
                    await self._refuse(scope, send, body)
                raise _BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went in the app's stead
            if message["type"] == "http.response.start":
                started = True
                if body.unread and not await body.drain():
                    MutableHeaders(scope=message).append("connection", "close")
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except Exception:
            if not refused:
                raise
            # The 413 was sent: whatever the app made of its cut-off body is moot.

    async def _refuse(self, scope: Scope, send: Send, body: _Body) -> None:
        message = f"the request body is over the limit of {body.limit.described}"
        content: dict[str, Any]
        if scope["path"] in OAUTH_PATHS:
            code = "invalid_client_metadata" if scope["path"] == "/register" else "invalid_request"
            content = oauth_error_body(code, message)
        else:
            content = error_body("payload_too_large", message)
        headers = {"Cache-Control": "no-store"}
        if body.unread and not await body.drain():
            headers["Connection"] = "close"
        response = JSONResponse(content, status_code=413, headers=headers)
        await response(scope, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


class DeferredSessionMiddleware:
    """Starlette's SessionMiddleware, made at the first request with the secret key the
    lifespan resolved: building the app reads and writes nothing in the data folder."""

    def __init__(
        self,
        app: ASGIApp,
        settings: Settings,
        *,
        session_cookie: str,
        max_age: int,
        path: str,
        same_site: Literal["lax", "strict", "none"],
        https_only: bool,
    ) -> None:
        self.app = app
        self.inner: SessionMiddleware | None = None

        def make() -> SessionMiddleware:
            return SessionMiddleware(
                app,
                secret_key=settings.resolved_secret_key(),
                session_cookie=session_cookie,
                max_age=max_age,
                path=path,
                same_site=same_site,
                https_only=https_only,
            )

        self.make = make

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.inner is None:
            self.inner = self.make()
        await self.inner(scope, receive, send)
