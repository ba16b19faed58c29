"""A plan's passages: each workspace searched (a local one through the search service in a
short read-only transaction of its own, a remote one over HTTP) by the fan-out, through the
cache, and the failures as the caller may read them.

A request holds no pooled connection while it fans out (docs/adr/0011): the plan comes from
the policy snapshot, and at most `_parallel(settings)` local workspaces are searched at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable
from dataclasses import dataclass

from app.access.principal import Principal
from app.config import Settings
from app.observe import metrics
from app.rag.embeddings.base import QueryEmbedder, Vectors
from app.routing import context, policy, remote
from app.routing.context import Passage
from app.routing.fanout import Found, fan_out
from app.routing.plan import Plan
from app.routing.schemas import REMOTE_FAILED, Failure
from app.routing.state import RoutingState
from app.search import service as search_service
from app.search.schemas import SearchRequest

logger = logging.getLogger(__name__)


def _parallel(settings: Settings) -> int:
    """How many workspaces one request searches at once: half the pool, so that one request
    cannot take every connection."""
    return max(1, settings.db_max_connections // 2)


class _QueryOnce:
    """Embeds the request's one query once for every workspace searched."""

    def __init__(self, inner: QueryEmbedder) -> None:
        self._inner = inner
        self._vectors: dict[str, Vectors] = {}
        # The first search embeds; the others wait for it (and, if it is cancelled, one of
        # them embeds instead).
        self._embedding = asyncio.Lock()

    async def embed_query(self, text: str) -> Vectors:
        async with self._embedding:
            if text not in self._vectors:
                self._vectors[text] = await self._inner.embed_query(text)
        return self._vectors[text]


@dataclass(frozen=True, slots=True)
class Gathered:
    passages: list[Passage]  # best first
    failures: list[Failure]
    cache_hit: bool


async def gather(
    state: RoutingState,
    principal: Principal,
    plan: Plan,
    workspaces: list[str],
    query: str,
    top_k: int,
) -> Gathered:
    """Search `workspaces` (which the caller may all see) for a checked query, through the
    cache."""
    settings = state.settings
    key: Hashable = (
        principal.user_id,
        principal.workspace_scope,
        plan.persona,
        tuple(workspaces),
        query,
        top_k,
    )
    cached = state.cache.get(key) if state.cache.enabled else None
    metrics.cache_lookup(plan.persona, cached is not None)
    if cached is not None:
        return Gathered(cached, [], cache_hit=True)
    since = state.cache.generations(workspaces)
    embedder = _QueryOnce(state.embedder)
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
                bearer = state.box.open(target.remote_token_encrypted)
                if bearer is None:
                    raise remote.RemoteFailed("its bearer was sealed under another SECRET_KEY")
            return await remote.search(
                state.http,
                base_url=target.remote_url,
                bearer=bearer,
                workspace=slug,
                license_id=license_id,
                query=query,
                top_k=top_k,
                deadline=deadline,
            )
        async with gate, state.db.read() as conn:
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
                stale=hit.stale,
            )
            for hit in hits
        ]

    found: Found = await fan_out(workspaces, one, timeout_s=timeout_s)
    passages = context.ranked(found.passages)
    if not found.failures:
        state.cache.put(key, passages, workspaces, since)
    return Gathered(passages, _told(principal, plan, found.failures), cache_hit=False)


def _told(principal: Principal, plan: Plan, failures: list[Failure]) -> list[Failure]:
    """The failures as the caller may read them: why a remote workspace failed is for admins
    (and the log). Told to everyone, a refused connection, a timeout or a remote's 403 would
    map the network behind the server; others learn only that it failed."""
    remotes = {f.workspace for f in failures if plan.targets[f.workspace].remote_url is not None}
    for failure in failures:
        if failure.workspace in remotes:
            logger.warning("remote workspace %s failed: %s", failure.workspace, failure.reason)
    if principal.shown("workspaces.manage"):
        return failures
    return [
        Failure(workspace=f.workspace, reason=REMOTE_FAILED) if f.workspace in remotes else f
        for f in failures
    ]
