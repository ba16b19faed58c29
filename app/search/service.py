"""Search, as every door offers it (and as asking's runs use it): the request checked, its
workspaces resolved through the workspaces service, the ranking (`app.rag.retrieval`) run, and
the question recorded with the door it came through. A question that finds nothing is a
documentation gap."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from uuid import UUID

import numpy as np

from app.access.principal import Principal
from app.config import Settings
from app.db.engine import ReadConnection, SideReads, WriteConnection
from app.errors import NotFound, ValidationFailed
from app.rag import retrieval
from app.rag.embeddings.base import Embedder, QueryEmbedder
from app.rag.schemas import SearchHit
from app.search import queries
from app.search.schemas import Door, Gap, Gaps, SearchRequest, SearchResult
from app.sources import service as sources_service
from app.workspaces import service as workspaces_service

logger = logging.getLogger(__name__)


def checked_query(settings: Settings, text: str, *, name: str = "query") -> str:
    """A query, question or stored message as it is searched: stripped, and within its limit
    (one rule for every door; `name` is the field the error names).

    Raises:
        ValidationFailed: blank, or over CORPUS_MAX_QUERY_CHARS.
    """
    query = text.strip()
    if not query:
        raise ValidationFailed(f"{name}: must not be blank")
    if len(query) > settings.max_query_chars:
        raise ValidationFailed(
            f"{name}: {len(query):,} characters is over the limit of {settings.max_query_chars:,}"
        )
    return query


async def rank(
    conn: ReadConnection,
    principal: Principal,
    embedder: QueryEmbedder,
    settings: Settings,
    request: SearchRequest,
    *,
    limit: int | None = None,
    tuning: retrieval.Tuning = retrieval.DEFAULT_TUNING,
    document_ids: list[UUID] | None = None,
    side: SideReads | None = None,
) -> list[SearchHit]:
    """The hits `search` would return, without recording the question (for the evaluation and
    the load bench). `limit` may exceed the API's top_k (the evaluation ranks documents from
    deeper lists). `side` lets a hybrid search read its halves at once (`retrieval.run`).

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query, or an
        unknown workspace.
    """
    principal.require("search", "your role may not search")
    query = checked_query(settings, request.query)
    workspace_ids = await workspaces_service.search_scope(conn, principal, request.workspaces)
    hits = await retrieval.run(
        conn,
        embedder,
        settings,
        query,
        mode=request.mode,
        caller_id=principal.user_id,
        workspace_ids=workspace_ids,
        tags=request.tags,
        stale=request.stale,
        limit=limit or request.top_k,
        tuning=tuning,
        document_ids=document_ids,
        side=side,
    )
    return await _with_provenance(conn, principal, hits)


async def _with_provenance(
    conn: ReadConnection, principal: Principal, hits: list[SearchHit]
) -> list[SearchHit]:
    """Hits of synced documents carry their path, commit and stale flag (one lookup by key)."""
    if not hits:
        return hits
    known = await sources_service.provenances(conn, principal, [hit.document_id for hit in hits])
    if not known:
        return hits
    return [
        hit
        if hit.document_id not in known
        else hit.model_copy(
            update={
                "source_path": known[hit.document_id].path,
                "commit": known[hit.document_id].commit,
                "stale": known[hit.document_id].stale,
            }
        )
        for hit in hits
    ]


async def unfiltered_hits(
    conn: ReadConnection,
    principal: Principal,
    embedder: QueryEmbedder,
    settings: Settings,
    request: SearchRequest,
    *,
    side: SideReads | None = None,
) -> int:
    """Whether (0 or 1) the caller's whole scope answers a query its filters (workspaces, tags,
    documents) emptied: if it does, the question is not a documentation gap; the documentation
    exists, the filters left it out."""
    unfiltered = request.model_copy(
        update={"workspaces": None, "tags": None, "stale": None, "top_k": 1}
    )
    return len(await rank(conn, principal, embedder, settings, unfiltered, side=side))


async def record_question(
    conn: WriteConnection,
    principal: Principal,
    question: str,
    *,
    door: Door,
    mode: str,
    best_similarity: float | None,
    hit_count: int,
) -> None:
    """Keep a question asked through `door`; one that found nothing (`hit_count` 0) is a
    documentation gap. The agents record their run's question once, not each search they
    make for it."""
    await queries.record_question(
        conn,
        user_id=principal.user_id,
        door=door,
        query=question.strip(),
        mode=mode,
        best_similarity=best_similarity,
        hit_count=hit_count,
        agent_key_id=principal.key_id,
        agent_client_id=principal.client_id,
    )


async def search(
    conn: WriteConnection,
    principal: Principal,
    embedder: QueryEmbedder,
    settings: Settings,
    request: SearchRequest,
    *,
    door: Door = "api",
    document_ids: list[UUID] | None = None,
    side: SideReads | None = None,
    reads: ReadConnection | None = None,
) -> SearchResult:
    """Search every workspace the caller may see (or the ones asked for; or only the documents
    `document_ids`) and record the question on `conn`. `side`: as for `rank`; `reads`: where to
    rank, when not on `conn` (a replica's connection, docs/adr/0032).

    Raises:
        ValidationFailed: a blank or too long query, or an unknown workspace.
    """
    started = time.perf_counter()
    ranking = conn if reads is None else reads
    hits = await rank(
        ranking, principal, embedder, settings, request, document_ids=document_ids, side=side
    )
    similarities = [hit.similarity for hit in hits if hit.similarity is not None]
    found = len(hits)
    if not hits and (
        request.workspaces or request.tags or request.stale is not None or document_ids
    ):
        found = await unfiltered_hits(ranking, principal, embedder, settings, request, side=side)
    await record_question(
        conn,
        principal,
        request.query,
        door=door,
        mode=request.mode,
        best_similarity=max(similarities) if similarities else None,
        hit_count=found,
    )
    took_ms = (time.perf_counter() - started) * 1000
    # Logged, not reported: the keyword half's time grows with a word's postings in every
    # document, the caller's or not, so a precise figure would tell a caller whether a word
    # appears in documents it cannot see. The field stays (API.md) and says nothing.
    logger.info("search (%s, %s): %d hits in %.1f ms", door, request.mode, len(hits), took_ms)
    return SearchResult(hits=hits, took_ms=0.0)


# Wordings whose vectors are at least this similar are one gap ("how do I roll back a deploy",
# "rolling back a deployment?"). Greedy, most-asked wording first, so a group is named by it.
GAP_SIMILARITY = 0.75
GAP_WINDOW = timedelta(days=90)
# The wordings grouped per call, the most asked first: bounds the embedding work of a read.
GAP_WORDINGS = 500
GAP_EXAMPLES = 5


async def _gap_groups(
    conn: ReadConnection, embedder: Embedder
) -> list[tuple[Gap, list[queries.UnansweredWording]]]:
    """The unanswered wordings of the last 90 days grouped by similar wording, each group with
    its gap, the most asked first."""
    wordings = await queries.unanswered_questions(
        conn, since=datetime.now(UTC) - GAP_WINDOW, limit=GAP_WORDINGS
    )
    if not wordings:
        return []
    vectors = await embedder.embed_passages([w.query for w in wordings])
    groups: list[list[int]] = []
    leaders: list[int] = []
    for i in range(len(wordings)):
        # Against every group's first wording at once: one product, not a loop per pair.
        similar = np.flatnonzero(vectors[leaders] @ vectors[i] >= GAP_SIMILARITY)
        if similar.size:
            groups[int(similar[0])].append(i)
        else:
            leaders.append(i)
            groups.append([i])
    found = []
    for members in groups:
        chosen = [wordings[i] for i in members]
        gap = Gap(
            question=chosen[0].query,
            count=sum(w.count for w in chosen),
            people=len({u for w in chosen for u in w.user_ids}),
            agents=len({a for w in chosen for a in w.agents}),
            last_asked_at=max(w.last_asked_at for w in chosen),
            examples=[w.query for w in chosen[:GAP_EXAMPLES]],
        )
        found.append((gap, chosen))
    found.sort(key=lambda g: (-g[0].count, -g[0].people, -g[0].last_asked_at.timestamp()))
    return found


async def documentation_gaps(
    conn: ReadConnection, principal: Principal, embedder: Embedder, *, limit: int = 50
) -> Gaps:
    """The questions that found nothing in the last 90 days, from every door, grouped by
    similar wording: how often each group was asked and by how many people, the most asked
    first. A dismissed gap's questions are left out until it is asked again.

    Raises:
        Forbidden: the caller may not read the gaps (admins only).
    """
    principal.require("gaps.read", "only admins may read the documentation gaps")
    return Gaps(items=[gap for gap, _ in await _gap_groups(conn, embedder)][:limit])


async def dismiss_gap(
    conn: WriteConnection, principal: Principal, embedder: Embedder, question: str
) -> None:
    """Dismiss the gap named by `question` (as `documentation_gaps` names it): every wording of
    its group, until one of them is asked again. Those who read the gaps tend them.

    Raises:
        Forbidden: the caller may not read the gaps. NotFound: no open gap is named so.
    """
    principal.require("gaps.read", "only admins may dismiss documentation gaps")
    for gap, wordings in await _gap_groups(conn, embedder):
        if gap.question == question:
            await queries.dismiss_wordings(
                conn, wordings=[w.query for w in wordings], dismissed_by=principal.user_id
            )
            return
    raise NotFound("no open documentation gap has this question")
