"""The composition root: `create_app()` wires settings, the pool, middleware, error handlers,
routers and the web app. Nothing imports this module."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any, cast

from argon2 import PasswordHasher
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import housekeeping
from app.agents.models import make_models
from app.asking.jobs import Jobs
from app.asking.limits import AnswerLimits
from app.config import Settings, get_settings
from app.db import embedded, migrate
from app.db.engine import Database
from app.documents.worker import Converter
from app.errors import AppError, error_body
from app.kit.addresses import AddressRules, Resolver, system_resolve
from app.kit.secrets import SecretBox
from app.mcp import server as mcp_server
from app.middleware import (
    BodyLimitMiddleware,
    DeferredSessionMiddleware,
    NulPathMiddleware,
    RequestIdMiddleware,
    UnavailableMiddleware,
)
from app.oauth.documents import ClientDocuments
from app.observe import tracing
from app.people.passwords import Hasher
from app.rag.embeddings import Embedder, EmbeddingError, make_embedder
from app.rag.embeddings.timed import TimedEmbedder
from app.resources import Resources
from app.routers import (
    asking,
    audit,
    auth,
    dashboard,
    documents,
    health,
    keys,
    knowledge,
    me,
    metrics,
    oauth_consent,
    oidc,
    people,
    routing,
    search,
    sources,
    workspaces,
)
from app.routing import listener
from app.routing import policy as routing_policy
from app.routing.state import RoutingState
from app.sessions.cookies import CookieSigner
from app.sources.sync import Syncer, Syncs
from app.spa import allowed_methods, is_api_path, register_api_docs, register_spa
from app.system import service as system_service
from app.throttle import Throttle

logger = logging.getLogger(__name__)

# Codes for the errors Starlette raises itself (unknown route, wrong method, ...).
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    503: "unavailable",
}


def _error(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # Echo where and why, never the input itself: it may be a password.
    details = [
        {"loc": list(err.get("loc", ())), "msg": err.get("msg", ""), "type": err.get("type", "")}
        for err in exc.errors()
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(part) for part in first["loc"])
    return _error(422, "validation_error", f"{where}: {first['msg']}", jsonable_encoder(details))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
    if exc.status_code == 400:
        # Raised by the framework for a body it could not read (not UTF-8, a broken form):
        # input that fails validation, as API.md has it.
        return _error(422, "validation_error", f"body: {message.lower()}")
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        path = request.url.path
        methods = allowed_methods(request.app.router.routes, path)
        if not methods:
            # Only the web app's catch-all (GET, HEAD) matched: under the server's prefixes
            # nothing lives there (ADR 0002); elsewhere it is a page of the web app.
            if is_api_path(path):
                return _error(404, "not_found", f"no route for {path}")
            methods = ["GET", "HEAD"]
        headers["Allow"] = ", ".join(methods)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return _error(exc.status_code, code, message, headers=headers)


async def _unhandled(_request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error", exc_info=exc)
    return _error(500, "internal", "internal error; the server log has the request id")


def _document_errors(app: FastAPI) -> None:
    """Say in the OpenAPI document what a 422 really carries: FastAPI documents its own
    `{"detail": [...]}` body, and `_validation_error` sends API.md's error shape instead (the
    web app's typed client is generated from this document). And that every operation that
    takes a body may answer 413: `BodyLimitMiddleware` bounds them all, ahead of the routes."""
    generate = app.openapi
    error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = generate()
            for path in spec.get("paths", {}).values():
                for operation in path.values():
                    responses = operation.setdefault("responses", {})
                    if "422" in responses:
                        responses["422"]["content"] = error_body
                    if "requestBody" in operation and "413" not in responses:
                        responses["413"] = {
                            "description": "The body is over the server's limit for it.",
                            "content": error_body,
                        }
            schemas = spec.get("components", {}).get("schemas", {})
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
        return app.openapi_schema or generate()

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override


async def _warm(embedder: Embedder) -> None:
    try:
        await embedder.warm()
    except EmbeddingError as exc:
        # Not fatal: /readyz keeps saying "warming", and a search reports the same error.
        logger.error("the embedding model could not be loaded: %s", exc)


def create_app(
    settings: Settings | None = None,
    *,
    argon2: PasswordHasher | None = None,
    resolve: Resolver | None = None,
    client_tls: ssl.SSLContext | None = None,
) -> FastAPI:
    """Build the ASGI app. The lifespan opens the pool (starting the embedded database when no
    DATABASE_URL is set) and closes it on shutdown. `argon2` (`Hasher`) and `resolve` (the
    name resolver of outgoing connections' address rules) and `client_tls` (the certificate
    authorities OAuth clients' metadata documents are verified with) are for tests."""
    settings = settings or get_settings()
    addresses = AddressRules(
        allow_private=settings.remote_allow_private, resolve=resolve or system_resolve
    )
    # Read now, so that an invalid policy file stops start-up with its line named.
    policy_file = routing_policy.load_file(settings.policy_file)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Generated on first start and kept in the data folder, so every process shares it.
        secret_key = settings.resolved_secret_key()
        signer = CookieSigner(secret_key)
        traced = bool(settings.traces_url)
        if traced:
            tracing.configure(settings.traces_url, service_name=settings.otel_service_name)
        url = await asyncio.to_thread(embedded.resolve_url, settings)
        db = Database(
            url,
            settings.database_read_url or None,
            max_connections=settings.db_max_connections,
            replica_max_lag_s=settings.replica_max_lag_s,
            replica_check_s=settings.replica_check_s,
        )
        try:
            await system_service.ensure_embedding_model(db, settings)
        except BaseException:
            await db.dispose()
            raise
        embedder: Embedder = TimedEmbedder(make_embedder(settings))
        hasher = Hasher(settings.hash_workers, argon2)
        converter = Converter(settings)
        models = make_models(settings)
        jobs = Jobs()
        box = SecretBox(secret_key)
        syncs = Syncs(
            Syncer(db=db, embedder=embedder, settings=settings, converter=converter, box=box)
        )
        routing_state = RoutingState.open(
            settings, db, embedder, box, policy_file, addresses=addresses
        )
        try:
            app.state.resources = Resources(
                settings=settings,
                db=db,
                head_revision=migrate.head_revision(settings),
                embedder=embedder,
                signer=signer,
                box=box,
                hasher=hasher,
                signin_per_address=Throttle(settings.signin_rate_per_address),
                signin_overall=Throttle(settings.signin_rate),
                converter=converter,
                models=models,
                jobs=jobs,
                limits=AnswerLimits.from_settings(settings),
                oidc=oidc.make_client(settings),
                routing=routing_state,
                addresses=addresses,
                syncs=syncs,
            )
            pruning = asyncio.create_task(housekeeping.run(db), name="housekeeping")
            scheduling = asyncio.create_task(
                housekeeping.sync_due_sources(db, syncs), name="scheduled syncs"
            )
            # The model loads while the process already answers: /readyz says "warming" until
            # it is loaded, so the first search after readiness is as fast as the hundredth.
            warming = asyncio.create_task(_warm(embedder), name="warm-embedder")
            listening = asyncio.create_task(
                listener.listen(
                    url,
                    routing_state.invalidate,
                    routing_state.forget_everything,
                    connected=routing_state.listening,
                ),
                name="cache invalidation",
            )
            background = [pruning, scheduling, warming, listening]
            if db.replica is not None:
                background.append(asyncio.create_task(db.replica.watch(), name="replica watch"))
            try:
                # The MCP SDK's session manager: stateless, but it still owns a task group.
                async with mcp_door.server.session_manager.run():
                    yield
            finally:
                for task in background:
                    task.cancel()
                await asyncio.gather(*background, return_exceptions=True)
                await syncs.aclose()
        finally:
            await jobs.aclose()
            await routing_state.aclose()
            hasher.close()
            await converter.aclose()
            await embedder.aclose()
            await db.dispose()
            if not settings.database_url:
                await asyncio.to_thread(embedded.release, settings.data_dir)
            if traced:
                tracing.shutdown()

    app = FastAPI(
        title="Corpus",
        summary="A knowledge base that coding agents and their people share.",
        version="0.1.0",
        lifespan=lifespan,
        # Served by app.spa from our own files; FastAPI's pages load their scripts from CDNs.
        docs_url=None,
        redoc_url=None,
    )
    # The last added runs first: every answer, a refused body's too, gets its request id and
    # access line; bodies are bounded before anything reads them.
    app.add_middleware(UnavailableMiddleware)
    app.add_middleware(NulPathMiddleware)
    app.add_middleware(BodyLimitMiddleware, settings=settings)
    app.add_middleware(RequestIdMiddleware)
    if oidc.configured(settings):
        # authlib's Starlette client keeps a sign-in's state in `request.session`.
        app.add_middleware(
            DeferredSessionMiddleware,
            settings=settings,
            session_cookie=oidc.STATE_COOKIE,
            max_age=oidc.STATE_MAX_AGE_S,
            path=oidc.STATE_COOKIE_PATH,
            same_site="lax",
            https_only=settings.public_url.startswith("https://"),
        )
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unhandled)

    # Routes are tried in order: the busiest of the API first (and MCP's before it, below).
    app.include_router(search.router)
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(auth.router)
    app.include_router(oidc.router)
    app.include_router(me.router)
    app.include_router(people.router)
    app.include_router(keys.router)
    app.include_router(audit.router)
    app.include_router(workspaces.router)
    app.include_router(sources.router)
    app.include_router(sources.webhook_router)
    app.include_router(documents.router)
    app.include_router(documents.chunks_router)
    app.include_router(documents.tags_router)
    app.include_router(asking.router)
    app.include_router(dashboard.router)
    app.include_router(routing.router)
    app.include_router(knowledge.router)
    app.include_router(oauth_consent.router)
    # The MCP endpoint and the SDK's OAuth routes.
    mcp_door = mcp_server.build(
        settings,
        lambda: cast(Resources, app.state.resources),
        ClientDocuments(addresses, verify=client_tls),
    )
    # First: routes are tried in order, and each router passed over costs a request its routes'
    # matching (about half a millisecond of CPU from the end of the list, docs/BENCHMARKS.md);
    # none of these paths is another route's.
    app.router.routes[0:0] = mcp_door.routes
    register_api_docs(app)
    register_spa(app, settings.static_dir)  # last: its catch-all must not shadow an API route
    _document_errors(app)
    return app
