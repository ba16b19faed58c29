"""Multi-corpus retrieval routed by persona (DESIGN.md §5, API.md "Multi-corpus"): the
effective policy and its admin edits, the fan-out over a persona's workspaces (local ones
through the search service, remote ones over HTTP), the cache in front of it, and the context
block built from what it found.

A request holds no pooled connection while it fans out (docs/adr/0011): the policy and the
workspaces are read in one short transaction, then each local workspace is searched in a short
read-only transaction of its own, at most `_parallel(settings)` at once per request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from uuid import UUID

import httpx
import numpy as np

from app.access.principal import Principal
from app.audit import service as audit_service
from app.config import Settings
from app.db.engine import Database, ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.documents.schemas import WorkspaceTarget
from app.errors import BadRequest, NotFound, ValidationFailed
from app.kit import outbound
from app.kit.addresses import AddressRules
from app.kit.secrets import SecretBox
from app.observe import metrics
from app.rag.embeddings.base import Embedder
from app.rag.schemas import SearchRequest
from app.routing import context, policy, queries, remote
from app.routing.cache import SearchCache
from app.routing.context import Passage
from app.routing.fanout import Found, fan_out
from app.routing.policy import FilePolicy, Layers, Route
from app.routing.schemas import (
    REMOTE_FAILED,
    CacheStats,
    ContextBlock,
    ContextRequest,
    Failure,
    KnowledgeResult,
    KnowledgeResults,
    KnowledgeSearch,
    KnowledgeSearchMulti,
    PersonaUpdate,
    Policy,
    RoutedWorkspace,
    RoutedWorkspaces,
    Source,
)
from app.search import service as search_service

# The last user message of a session, for `POST /api/context` by session alone: kept per
# process, like the search cache (a client asks the replica it told, or sends the query). Each
# caller has a share of its own, so that one caller's flood pushes out its own messages only,
# and a message is bounded where it is accepted (CORPUS_MAX_QUERY_CHARS, as when it is used):
# the store holds at most SESSION_MESSAGES such messages, whoever sends them.
SESSION_MESSAGES = 10_000
SESSION_MESSAGES_PER_CALLER = 1_000
SESSION_MESSAGE_TTL_S = 3600
logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    admin: dict[str, tuple[str, ...]]
    targets: list[WorkspaceTarget]
    expires_at: float


class SessionMessages:
    """The last user message of each caller's sessions, for `ttl_s`: at most `per_caller`
    sessions a caller (its oldest go first) and `capacity` in all. When the whole store is full,
    a new message pushes out the oldest of the caller holding the most (the sender's own when it
    holds as many): a caller can take another's place only while it holds fewer than them."""

    def __init__(
        self,
        *,
        capacity: int,
        per_caller: int,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._capacity = capacity
        self._per_caller = per_caller
        self._ttl_s = ttl_s
        self._clock = clock
        # Each caller's sessions, oldest first (every message lives as long: also by expiry).
        self._callers: dict[UUID | None, OrderedDict[str, tuple[str, float]]] = {}
        self._size = 0

    def put(self, caller: UUID | None, session_id: str, text: str) -> None:
        now = self._clock()
        mine = self._callers.setdefault(caller, OrderedDict())
        if mine.pop(session_id, None) is not None:
            self._size -= 1
        mine[session_id] = (text, now + self._ttl_s)
        self._size += 1
        while len(mine) > self._per_caller:
            self._drop_oldest(caller)
        if self._size > self._capacity:
            for other in list(self._callers):
                self._drop_expired(other, now)
        while self._size > self._capacity:
            largest = max(self._callers, key=lambda other: len(self._callers[other]))
            if len(self._callers.get(caller, ())) >= len(self._callers[largest]):
                largest = caller
            self._drop_oldest(largest)

    def get(self, caller: UUID | None, session_id: str) -> str | None:
        held = self._callers.get(caller)
        found = held.get(session_id) if held is not None else None
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    def _drop_oldest(self, caller: UUID | None) -> None:
        held = self._callers[caller]
        held.popitem(last=False)
        self._size -= 1
        if not held:
            del self._callers[caller]

    def _drop_expired(self, caller: UUID | None, now: float) -> None:
        held = self._callers[caller]
        while caller in self._callers and next(iter(held.values()))[1] <= now:
            self._drop_oldest(caller)


def _session_messages() -> SessionMessages:
    return SessionMessages(
        capacity=SESSION_MESSAGES,
        per_caller=SESSION_MESSAGES_PER_CALLER,
        ttl_s=SESSION_MESSAGE_TTL_S,
    )


@dataclass
class Routing:
    """What routing keeps for the process's life: the policy file's layer (read at start-up),
    the cache, the HTTP client for remote workspaces, and the session messages."""

    settings: Settings
    db: Database
    embedder: Embedder
    box: SecretBox
    file: FilePolicy
    # Where remote workspaces may be (checked again by `http` at every connection).
    addresses: AddressRules
    http: httpx.AsyncClient
    cache: SearchCache[list[Passage]]
    messages: SessionMessages = field(default_factory=_session_messages)
    # Set while this process listens for workspace changes (tests wait on it).
    listening: asyncio.Event = field(default_factory=asyncio.Event)
    # The admins' personas and every workspace row, so that a cache hit reads no table: kept
    # like the cache (its TTL), dropped by any change notification.
    snapshot: _Snapshot | None = None
    snapshot_epoch: int = 0

    def drop_snapshot(self) -> None:
        self.snapshot = None
        self.snapshot_epoch += 1

    @classmethod
    def open(
        cls,
        settings: Settings,
        db: Database,
        embedder: Embedder,
        box: SecretBox,
        file: FilePolicy,
        *,
        addresses: AddressRules | None = None,
    ) -> Routing:
        addresses = addresses or AddressRules(allow_private=settings.remote_allow_private)
        return cls(
            settings=settings,
            db=db,
            embedder=embedder,
            box=box,
            file=file,
            addresses=addresses,
            # Remote workspaces are other servers: no redirects, no proxies from the
            # environment deciding where a bearer goes, and only the addresses allowed.
            http=outbound.client(addresses),
            cache=SearchCache(settings.cache_max_entries, settings.cache_ttl_s),
        )

    async def aclose(self) -> None:
        await self.http.aclose()


def _parallel(settings: Settings) -> int:
    """How many workspaces one request searches at once: half the pool, so that one request
    cannot take every connection."""
    return max(1, settings.db_max_connections // 2)


class _QueryOnce:
    """An embedder that embeds the request's one query once for every workspace searched."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.dim = inner.dim
        self.default_floor = inner.default_floor
        self.window = inner.window
        self.count_tokens = inner.count_tokens
        self._vectors: dict[str, np.ndarray] = {}
        # The first search embeds; the others wait for it (and, if it is cancelled, one of
        # them embeds instead).
        self._embedding = asyncio.Lock()

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await self._inner.embed_passages(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        async with self._embedding:
            if text not in self._vectors:
                self._vectors[text] = await self._inner.embed_query(text)
        return self._vectors[text]

    @property
    def ready(self) -> bool:
        return self._inner.ready

    async def warm(self) -> None:
        await self._inner.warm()

    async def aclose(self) -> None:
        return None


# --- the policy -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    layers: Layers
    persona: str | None
    route: Route
    targets: dict[str, WorkspaceTarget]  # the workspaces the caller may search, by slug


async def _layers(conn: ReadConnection, routing: Routing) -> Layers:
    return Layers(
        mode=routing.settings.routing_mode,
        default_persona=routing.settings.default_persona or None,
        file=routing.file,
        admin=await queries.admin_personas(conn),
        workspaces=await documents_service.workspace_licenses(conn),
    )


async def effective_policy(
    conn: ReadConnection, routing: Routing, principal: Principal, *, persona: str | None = None
) -> Policy:
    """The effective policy and the layer of each entry; one persona's with `persona`. A key
    bound to a workspace sees that workspace only, as `rag_workspaces` lists it: the personas'
    lists, the licenses and the missing workspaces name no other.

    Raises:
        Forbidden: the role may not search. NotFound: no such persona.
    """
    principal.require("search", "your role may not search")
    effective = policy.effective(await _layers(conn, routing))
    if principal.workspace_scope is not None:
        effective = _naming_only(effective, {principal.workspace_scope})
    if persona is None:
        return effective
    if persona not in effective.personas:
        raise NotFound(f"no persona named {persona!r}")
    entry = effective.personas[persona]
    return _naming_only(
        effective.model_copy(update={"personas": {persona: entry}}), entry.workspaces
    )


def _naming_only(effective: Policy, workspaces: Collection[str]) -> Policy:
    """`effective` with no workspace but `workspaces` named anywhere in it."""
    named = set(workspaces)
    return effective.model_copy(
        update={
            "personas": {
                name: entry.model_copy(
                    update={"workspaces": [w for w in entry.workspaces if w in named]}
                )
                for name, entry in effective.personas.items()
            },
            "licenses": {w: e for w, e in effective.licenses.items() if w in named},
            "missing_workspaces": [w for w in effective.missing_workspaces if w in named],
        }
    )


async def set_persona(
    conn: WriteConnection, routing: Routing, principal: Principal, slug: str, data: PersonaUpdate
) -> Policy:
    """Set a persona's workspaces in the admins' layer, over the file and the built-in table.

    Raises:
        Forbidden: not an admin (or a key bound to one workspace).
    """
    principal.require("policy.manage", "only admins change the routing policy")
    before = await queries.admin_personas(conn)
    workspaces = list(dict.fromkeys(data.workspaces))
    await queries.set_persona(conn, slug=slug, workspaces=workspaces, updated_by=principal.user_id)
    await audit_service.record(
        conn,
        principal,
        "persona.set",
        target_type="persona",
        target_id=slug,
        before={"workspaces": list(before[slug])} if slug in before else None,
        after={"workspaces": workspaces},
    )
    return await effective_policy(conn, routing, principal)


async def delete_persona(
    conn: WriteConnection, routing: Routing, principal: Principal, slug: str
) -> None:
    """Drop the admins' entry for a persona, so the file's or the built-in one applies again.

    Raises:
        Forbidden: not an admin. NotFound: admins set nothing for this persona.
    """
    principal.require("policy.manage", "only admins change the routing policy")
    before = await queries.admin_personas(conn)
    if not await queries.delete_persona(conn, slug):
        raise NotFound(f"admins set no policy for persona {slug!r}")
    routing.drop_snapshot()
    await audit_service.record(
        conn,
        principal,
        "persona.delete",
        target_type="persona",
        target_id=slug,
        before={"workspaces": list(before[slug])},
        after=None,
    )


# --- searching ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Searched:
    passages: list[Passage]  # best first
    failures: list[Failure]
    cache_hit: bool


async def _search(
    routing: Routing,
    principal: Principal,
    plan: _Plan,
    workspaces: list[str],
    query: str,
    top_k: int,
) -> _Searched:
    """Search `workspaces` (which the caller may all see) through the cache."""
    settings = routing.settings
    key: Hashable = (
        principal.user_id,
        principal.workspace_scope,
        plan.persona,
        tuple(workspaces),
        query,
        top_k,
    )
    cached = routing.cache.get(key) if routing.cache.enabled else None
    metrics.cache_lookup(plan.persona, cached is not None)
    if cached is not None:
        return _Searched(cached, [], cache_hit=True)
    since = routing.cache.snapshot(workspaces)
    embedder = _QueryOnce(routing.embedder)
    gate = asyncio.Semaphore(_parallel(settings))
    loop = asyncio.get_running_loop()
    timeout_s = settings.fanout_timeout_ms / 1000
    deadline = loop.time() + timeout_s

    async def one(slug: str) -> list[Passage]:
        target = plan.targets[slug]
        license_id = policy.license_of(plan.layers, slug).license
        if target.remote_url is not None:
            bearer = None
            if target.remote_token_encrypted is not None:
                bearer = routing.box.open(target.remote_token_encrypted)
                if bearer is None:
                    raise remote.RemoteFailed("its bearer was sealed under another SECRET_KEY")
            return await remote.search(
                routing.http,
                base_url=target.remote_url,
                bearer=bearer,
                workspace=slug,
                license_id=license_id,
                query=query,
                top_k=top_k,
                deadline=deadline,
            )
        async with gate, routing.db.read() as conn:
            hits = await search_service.rank(
                conn,
                principal,
                embedder,
                settings,
                SearchRequest(query=query, workspaces=[slug], top_k=top_k),
            )
        return [
            Passage(
                workspace=slug,
                license=license_id,
                title=hit.title,
                text=hit.text,
                score=hit.score,
                document_id=hit.document_id,
                chunk_id=hit.chunk_id,
                heading_path=tuple(hit.heading_path),
            )
            for hit in hits
        ]

    found: Found = await fan_out(workspaces, one, timeout_s=timeout_s)
    passages = context.ranked(found.passages)
    if not found.failures:
        routing.cache.put(key, passages, workspaces, since)
    return _Searched(passages, _told(principal, plan, found.failures), cache_hit=False)


def _told(principal: Principal, plan: _Plan, failures: list[Failure]) -> list[Failure]:
    """The failures as the caller may read them: why a remote workspace failed is for admins
    (and the log). Told to everyone, a refused connection, a timeout or a remote's 403 would
    map the network behind the server; others learn only that it failed."""
    remote = {f.workspace for f in failures if plan.targets[f.workspace].remote_url is not None}
    for failure in failures:
        if failure.workspace in remote:
            logger.warning("remote workspace %s failed: %s", failure.workspace, failure.reason)
    if principal.shown("workspaces.manage"):
        return failures
    return [
        Failure(workspace=f.workspace, reason=REMOTE_FAILED) if f.workspace in remote else f
        for f in failures
    ]


async def _snapshot(routing: Routing, *, fresh: bool = False) -> _Snapshot:
    """The admins' personas and the workspaces, from memory while fresh, else read in one short
    transaction (none is held while fanning out)."""
    snapshot = routing.snapshot
    if not fresh and snapshot is not None and snapshot.expires_at > time.monotonic():
        return snapshot
    epoch = routing.snapshot_epoch
    async with routing.db.read() as conn:
        admin = await queries.admin_personas(conn)
        targets = await documents_service.every_workspace_target(conn)
    snapshot = _Snapshot(admin, targets, time.monotonic() + routing.settings.cache_ttl_s)
    # A change notified while this was read may not be in it: then it serves this request only.
    if routing.snapshot_epoch == epoch:
        routing.snapshot = snapshot
    return snapshot


async def _planned(
    routing: Routing, principal: Principal, persona: str | None, *, named: Sequence[str] = ()
) -> _Plan:
    """The request's plan. A workspace the caller `named` that the snapshot lacks may have been
    created since it was taken (its notification still on the way): read again before calling
    it unknown."""
    snapshot = await _snapshot(routing)
    known = {t.slug for t in snapshot.targets}
    if any(slug not in known for slug in named):
        snapshot = await _snapshot(routing, fresh=True)
    layers = Layers(
        mode=routing.settings.routing_mode,
        default_persona=routing.settings.default_persona or None,
        file=routing.file,
        admin=snapshot.admin,
        workspaces={t.slug: t.license for t in snapshot.targets},
    )
    # The personas only: the whole effective policy (every license) is not needed per request.
    personas = policy.personas(layers)
    resolved = policy.resolve_persona(
        personas, explicit=persona, bound=principal.persona, default=layers.default_persona
    )
    targets = {t.slug: t for t in documents_service.searchable(principal, snapshot.targets)}
    route = policy.route(layers, resolved, list(targets), merged=personas)
    return _Plan(layers, resolved, route, targets)


def _results(searched: _Searched) -> list[KnowledgeResult]:
    return [
        KnowledgeResult(
            workspace=p.workspace,
            document_id=p.document_id,
            chunk_id=p.chunk_id,
            title=p.title,
            text=p.text,
            score=p.score,
            license=p.license,
            heading_path=list(p.heading_path),
        )
        for p in searched.passages
    ]


async def context_block(
    routing: Routing, principal: Principal, request: ContextRequest
) -> ContextBlock:
    """A context block for a system prompt, from the persona's workspaces.

    Raises:
        Forbidden: the role may not search. ValidationFailed: no query (and no stored message
        for the session), a blank or too long one, or an unknown persona.
    """
    principal.require("search", "your role may not search")
    text = request.query
    if text is None and request.session_id is not None:
        text = routing.messages.get(principal.user_id, request.session_id)
    if text is None:
        raise ValidationFailed(
            "query: send a query, or a session_id whose last user message was stored",
            details=[{"loc": ["body", "query"]}],
        )
    query = search_service.checked_query(routing.settings, text)
    plan = await _planned(routing, principal, request.persona)
    searched = await _search(routing, principal, plan, plan.route.workspaces, query, request.top_k)
    block = context.build(searched.passages, request.token_budget or routing.settings.token_budget)
    return ContextBlock(
        block=block.text,
        persona=plan.persona,
        workspaces=plan.route.workspaces,
        sources=[
            Source(
                key=f"[{i}]",
                workspace=p.workspace,
                license=p.license,
                document_id=p.document_id,
                chunk_id=p.chunk_id,
                title=p.title,
                score=p.score,
            )
            for i, p in enumerate(block.passages, start=1)
        ],
        failures=searched.failures,
        cache_hit=searched.cache_hit,
        tokens=block.tokens,
        missing_workspaces=plan.route.missing,
    )


def remember_message(routing: Routing, principal: Principal, session_id: str, text: str) -> None:
    """Keep a session's last user message, so its context block can be asked for by session:
    checked now as it will be checked then, so that the store holds only what could be used.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank message, or one over
        CORPUS_MAX_QUERY_CHARS (nothing is stored).
    """
    principal.require("search", "your role may not search")
    text = search_service.checked_query(routing.settings, text, name="text")
    routing.messages.put(principal.user_id, session_id, text)


async def routed_search(
    routing: Routing,
    principal: Principal,
    query: str,
    *,
    workspaces: list[str] | None = None,
    top_k: int = 5,
    persona: str | None = None,
) -> KnowledgeResults:
    """`rag_search`: the persona's workspaces (narrowed to `workspaces` when given), fanned out.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query, or an
        unknown persona.
    """
    principal.require("search", "your role may not search")
    query = search_service.checked_query(routing.settings, query)
    plan = await _planned(routing, principal, persona, named=workspaces or ())
    chosen = plan.route.workspaces
    if workspaces is not None:
        wanted = set(workspaces)
        chosen = [w for w in chosen if w in wanted]
    searched = await _search(routing, principal, plan, chosen, query, top_k)
    return KnowledgeResults(
        results=_results(searched),
        failures=searched.failures,
        cache_hit=searched.cache_hit,
        persona=plan.persona,
        workspaces=chosen,
    )


async def knowledge_search(
    routing: Routing, principal: Principal, request: KnowledgeSearch
) -> KnowledgeResults:
    """The Anvil contract's single-workspace call: the workspace is the key's.

    Raises:
        BadRequest: the credential is not bound to a workspace. Forbidden: the role may not
        search. ValidationFailed: a blank or too long query.
    """
    principal.require("search", "your role may not search")
    if principal.workspace_scope is None:
        raise BadRequest(
            "this call searches the API key's workspace: use a key bound to one workspace, "
            "or POST /v1/knowledge/search-multi"
        )
    query = search_service.checked_query(routing.settings, request.query)
    plan = await _planned(routing, principal, None, named=[principal.workspace_scope])
    chosen = [w for w in [principal.workspace_scope] if w in plan.targets]
    searched = await _search(routing, principal, plan, chosen, query, request.top_k)
    return KnowledgeResults(
        results=_results(searched),
        failures=searched.failures,
        cache_hit=searched.cache_hit,
        workspaces=chosen,
    )


async def knowledge_search_multi(
    routing: Routing, principal: Principal, request: KnowledgeSearchMulti
) -> KnowledgeResults:
    """The Anvil contract's multi call: one key and an allowlist of workspaces, searched in
    the allowlist's order; one the caller may not search is reported as a failure.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query.
    """
    principal.require("search", "your role may not search")
    query = search_service.checked_query(routing.settings, request.query)
    wanted = list(dict.fromkeys(request.workspaces))
    plan = await _planned(routing, principal, None, named=wanted)
    chosen = [w for w in wanted if w in plan.targets]
    refused = [
        Failure(workspace=w, reason=f"not_found: no workspace named {w!r} that you may search")
        for w in wanted
        if w not in plan.targets
    ]
    searched = await _search(routing, principal, plan, chosen, query, request.top_k)
    return KnowledgeResults(
        results=_results(searched),
        failures=[*refused, *searched.failures],
        cache_hit=searched.cache_hit,
        workspaces=chosen,
    )


async def routed_workspaces(
    conn: ReadConnection, routing: Routing, principal: Principal
) -> RoutedWorkspaces:
    """`rag_workspaces`: the workspaces the caller may search, with their effective licenses.

    Raises:
        Forbidden: the role may not search.
    """
    principal.require("search", "your role may not search")
    layers = await _layers(conn, routing)
    targets = {t.slug: t for t in await documents_service.workspace_targets(conn, principal)}
    items = []
    for workspace in await documents_service.list_workspaces(conn, principal):
        entry = policy.license_of(layers, workspace.slug)
        items.append(
            RoutedWorkspace(
                slug=workspace.slug,
                title=workspace.title,
                description=workspace.description,
                tier=workspace.tier,
                license=entry.license,
                license_source=entry.source,
                remote=targets[workspace.slug].remote_url is not None,
                document_count=workspace.document_count,
            )
        )
    return RoutedWorkspaces(items=items)


async def persona_scope(routing: Routing, principal: Principal, persona: str) -> list[str]:
    """The local workspaces a question asked as `persona` searches, in the persona's order,
    within what the caller may see (the answering agents search through `search`, which knows
    no remote workspace).

    Raises:
        ValidationFailed: no layer of the policy knows the persona.
    """
    plan = await _planned(routing, principal, persona)
    return [slug for slug in plan.route.workspaces if plan.targets[slug].remote_url is None]


def cache_stats(routing: Routing, principal: Principal) -> CacheStats:
    """The cache's figures in this process.

    Raises:
        Forbidden: not an admin.
    """
    principal.require("cache.read", "only admins read the cache's figures")
    return routing.cache.stats()


def invalidate(routing: Routing, workspace: str) -> None:
    """A workspace changed, or with an empty name the admins' policy did (the notification
    arrived): drop what the cache holds of it, and the policy snapshot."""
    routing.drop_snapshot()
    if workspace:
        routing.cache.invalidate(workspace)


def forget_everything(routing: Routing) -> None:
    """The notifications were (re)connected: changes may have been missed meanwhile."""
    routing.drop_snapshot()
    routing.cache.clear()
