"""Dependency aliases, named for what they guarantee. An endpoint without an auth alias is public
by construction (tests list the public ones).

Principal resolution lives here, in one place, for the credentials of `/api`: the session cookie
and `Authorization: Bearer ck_...`. (OAuth access tokens are accepted at `/mcp` only.)

A request uses one pooled connection at a time: the request's connection depends on resolving
the caller, so the credential's lookup (and the short transaction that records its use, once a
minute) has ended before that connection is taken, whatever order an endpoint lists its
parameters in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Annotated, Any, cast
from urllib.parse import urlsplit

from fastapi import Depends, Request

from app.access.principal import Principal, require_password_changed
from app.auth import service as auth_service
from app.auth.tokens import API_KEY_PREFIX
from app.config import Settings
from app.db.engine import Lookup, ReadConnection, ShortTransaction, SideReads, WriteConnection
from app.errors import AppError, Forbidden, RateLimited, Unauthorized
from app.logs import note_caller
from app.people.passwords import Hasher
from app.rag.embeddings.base import Embedder
from app.resources import Resources
from app.routing.state import RoutingState
from app.sessions.cookies import SESSION_COOKIE, CookieSigner

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


# The dependencies below are `async def` though they await nothing: FastAPI runs a plain `def`
# dependency in its thread pool, and a search went through four such hops (settings, embedder,
# side reads, the credential's transaction), each a thread's wake-up and a trip back to the
# event loop, on the cores the search needs (docs/BENCHMARKS.md, issue #33). The plain
# functions stay for the code that calls them directly.


def get_resources(request: Request) -> Resources:
    return cast(Resources, request.app.state.resources)


async def resources_dep(request: Request) -> Resources:
    return get_resources(request)


def get_settings_dep(request: Request) -> Settings:
    return get_resources(request).settings


async def settings_dep(request: Request) -> Settings:
    return get_resources(request).settings


async def get_embedder(request: Request) -> Embedder:
    return get_resources(request).embedder


async def get_routing(request: Request) -> RoutingState:
    return get_resources(request).routing


def get_signer(request: Request) -> CookieSigner:
    return get_resources(request).signer


async def signer_dep(request: Request) -> CookieSigner:
    return get_resources(request).signer


async def get_hasher(request: Request) -> Hasher:
    return get_resources(request).hasher


async def short_transaction(request: Request) -> ShortTransaction:
    """Opens transactions of their own: credential checks (which record last use); the
    password routes, which count a guess (it must survive the request's rollback) and run
    Argon2 between transactions, with no connection held; and uploads, which open the
    request's one transaction after the file has converted."""
    return get_resources(request).db.write


async def credential_lookup(request: Request) -> Lookup:
    """Runs a credential's lookup: one statement on the primary, without a transaction."""
    return get_resources(request).db.lookup


def client_address(request: Request) -> str:
    # Behind a proxy, uvicorn's proxy_headers makes this the forwarded address, from the
    # proxies FORWARDED_ALLOW_IPS trusts (by default 127.0.0.1).
    return request.client.host if request.client else "unknown"


async def throttle_password_attempts(request: Request) -> None:
    """Sign-in, sign-up and password changes each cost an Argon2 hash: count them per client
    address and over the process, before any other work.

    Raises:
        RateLimited: either budget is spent (with Retry-After).
    """
    resources = get_resources(request)
    wait = resources.signin_per_address.hit("address", client_address(request))
    if wait is None:
        wait = resources.signin_overall.hit("all")
    if wait is not None:
        raise RateLimited("too many password attempts; try again later", retry_after_s=wait)


def origin_of(request: Request) -> str | None:
    """Where a browser says the request comes from: `Origin`, else the origin of `Referer`."""
    origin = request.headers.get("origin")
    if origin:
        return origin
    referer = urlsplit(request.headers.get("referer", ""))
    return f"{referer.scheme}://{referer.netloc}" if referer.scheme and referer.netloc else None


def check_origin(request: Request, settings: Settings, *, required: bool) -> None:
    """CSRF defence for requests a browser may send with our cookie: they must come from one of
    our own origins. `required` False lets requests without either header pass (scripts
    signing in); a foreign origin never passes.

    Raises:
        Forbidden: a foreign origin, or none where one is required.
    """
    origin = origin_of(request)
    if origin is None and not required:
        return
    if origin not in settings.allowed_origins:
        raise Forbidden(
            "cross-site request refused: a write with the session cookie must come from this "
            "server's own pages (Origin or Referer)"
        )


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent the request, or why their credential was refused (raised only by the routes
    that want a principal: a public route ignores a bad credential)."""

    principal: Principal | None
    refusal: AppError | None = None


async def resolve_caller(
    request: Request,
    lookup: Annotated[Lookup, Depends(credential_lookup)],
    transaction: Annotated[ShortTransaction, Depends(short_transaction)],
) -> Caller:
    try:
        principal = await _principal(request, lookup, transaction)
    except (Unauthorized, Forbidden) as refusal:
        return Caller(None, refusal)
    if principal is not None:
        note_caller(principal.user_id, principal.kind, principal.credential)
    return Caller(principal)


async def write_connection(
    request: Request, _caller: Annotated[Caller, Depends(resolve_caller)]
) -> AsyncIterator[WriteConnection]:
    # One request, one transaction. scope="function" commits when the endpoint returns and
    # before the response is sent, so a failing commit becomes a 5xx instead of following a 200.
    async with get_resources(request).db.write() as conn:
        yield conn


async def read_connection(
    request: Request, _caller: Annotated[Caller, Depends(resolve_caller)]
) -> AsyncIterator[ReadConnection]:
    async with get_resources(request).db.read() as conn:
        yield conn


async def primary_read_connection(
    request: Request, _caller: Annotated[Caller, Depends(resolve_caller)]
) -> AsyncIterator[ReadConnection]:
    async with get_resources(request).db.read_primary() as conn:
        yield conn


@dataclass(frozen=True, slots=True)
class SearchReads:
    """Where a search ranks: a replica's connection (None: on the request's own) and the side
    connections that run beside it (ADR 0015, ADR 0032)."""

    conn: ReadConnection | None
    side: SideReads | None


async def side_reads(request: Request) -> SideReads | None:
    """Second read connections, for a statement that runs beside the request's own (ADR 0015)."""
    return get_resources(request).db.side_reads


async def optional_principal(
    caller: Annotated[Caller, Depends(resolve_caller)],
) -> Principal | None:
    """The caller, from an API key or the session cookie; None for an anonymous request.

    Raises:
        Unauthorized: an Authorization header that is not a valid API key.
        Forbidden: a cookie-authenticated write from a foreign origin.
    """
    if caller.refusal is not None:
        raise caller.refusal
    return caller.principal


async def _principal(
    request: Request, lookup: Lookup, transaction: ShortTransaction
) -> Principal | None:
    authorization = request.headers.get("authorization")
    if authorization is not None:
        scheme, _, credential = authorization.partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential.startswith(API_KEY_PREFIX):
            raise Unauthorized("send an API key as `Authorization: Bearer ck_...`")
        principal = await auth_service.principal_from_api_key(lookup, transaction, credential)
        if principal is None:
            raise Unauthorized("the API key is unknown or revoked, or its account is disabled")
        return principal
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    principal = await auth_service.principal_from_session(
        lookup, transaction, get_signer(request), cookie
    )
    if principal is not None and request.method not in SAFE_METHODS:
        check_origin(request, get_settings_dep(request), required=True)
    return principal


async def signed_in(
    principal: Annotated[Principal | None, Depends(optional_principal)],
) -> Principal:
    """Raises:
    Unauthorized: no credential.
    """
    if principal is None:
        raise Unauthorized("sign in, or send an API key as `Authorization: Bearer ck_...`")
    return principal


async def current_principal(principal: Annotated[Principal, Depends(signed_in)]) -> Principal:
    """A caller who may use the product: signed in, and not holding a temporary password.

    Raises:
        Unauthorized: no credential. Forbidden: the password must be changed first.
    """
    return require_password_changed(principal)


async def session_principal(
    principal: Annotated[Principal, Depends(current_principal)],
) -> Principal:
    """A person signed in with a session: what a key or token that leaked must not do.

    Raises:
        Unauthorized: no credential. Forbidden: a key or token, or a temporary password.
    """
    if principal.credential != "session":
        raise Forbidden("sign in with your password for this: a key or token may not")
    return principal


async def answering_run(
    request: Request, principal: Annotated[Principal, Depends(current_principal)]
) -> AsyncIterator[ExitStack]:
    """Hold one of the caller's runs until the response has been sent: a streamed answer's
    slot comes back when its stream ends, fails, or the client leaves (which cancels the run).
    A run that goes on without its stream (a chat's deep run) takes the slot over
    (`ExitStack.pop_all`) and gives it back when it ends.

    Raises:
        RateLimited: the caller has as many runs under way as one person may.
    """
    with ExitStack() as held:
        held.enter_context(get_resources(request).limits.run(principal.user_id))
        yield held


AppResources = Annotated[Resources, Depends(resources_dep)]
AppSettings = Annotated[Settings, Depends(settings_dep)]
AppSigner = Annotated[CookieSigner, Depends(signer_dep)]
AppHasher = Annotated[Hasher, Depends(get_hasher)]
ShortTx = Annotated[ShortTransaction, Depends(short_transaction)]
WriteConn = Annotated[WriteConnection, Depends(write_connection, scope="function")]
ReadConn = Annotated[ReadConnection, Depends(read_connection, scope="function")]
AppSideReads = Annotated[SideReads | None, Depends(side_reads)]
# A read that must see every commit, another caller's too: on the primary even with a replica.
PrimaryReadConn = Annotated[ReadConnection, Depends(primary_read_connection, scope="function")]


async def search_reads(
    request: Request,
    _caller: Annotated[Caller, Depends(resolve_caller)],
    side: AppSideReads,
) -> AsyncIterator[SearchReads]:
    """A search's ranking on the replica when it may serve the caller (docs/adr/0032)."""
    db = get_resources(request).db
    async with db.replica_read() as replica:
        yield SearchReads(replica, side if replica is None else db.replica_side_reads)


ReplicaReads = Annotated[SearchReads, Depends(search_reads, scope="function")]
AppEmbedder = Annotated[Embedder, Depends(get_embedder)]
AppRouting = Annotated[RoutingState, Depends(get_routing)]
# The caller must be signed in (cookie or API key) and free of a temporary password.
CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
# The errors those two can answer, for the OpenAPI document of every router behind them.
SIGNED_IN_ERRORS: dict[int | str, dict[str, Any]] = {401: Unauthorized.openapi()}
PRINCIPAL_ERRORS: dict[int | str, dict[str, Any]] = {
    **SIGNED_IN_ERRORS,
    403: Forbidden.openapi(),
}
# Signed in, even with a temporary password: only the account's own routes use this.
SignedIn = Annotated[Principal, Depends(signed_in)]
# A current principal signed in with a session cookie, not a key or token.
SessionPrincipal = Annotated[Principal, Depends(session_principal)]
# For a route's `dependencies=`: it is counted against the password-attempt throttles first.
PasswordAttempt = Depends(throttle_password_attempts)
# One of the caller's answering runs, held while the route answers (or taken over).
AnsweringRun = Annotated[ExitStack, Depends(answering_run)]
