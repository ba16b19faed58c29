"""Hybrid retrieval (DESIGN.md §4): a dense top-k on the HNSW index and a BM25 top-k over the
postings, fused by reciprocal rank in one SQL statement that also applies the caller's
visibility and workspace scope. Every search is recorded as a question."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from uuid import UUID

from app.auth.principal import Principal
from app.config import Settings
from app.db.engine import ReadConnection, WriteConnection
from app.documents import queries as documents_queries
from app.errors import ValidationFailed
from app.rag import queries
from app.rag.embeddings.base import Embedder
from app.rag.schemas import SearchHit, SearchMode, SearchRequest, SearchResult

logger = logging.getLogger(__name__)

_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True, slots=True)
class Tuning:
    """The fusion's knobs, set by measurement on SciFact (docs/BENCHMARKS.md)."""

    dense_depth: int = 100
    keyword_depth: int = 100
    postings_per_term: int = 1000
    rrf_k: float = 60.0
    dense_weight: float = 1.0
    keyword_weight: float = 1.0
    # A keyword-only hit must cover this share of the query's lexemes, weighted by idf. In
    # hybrid mode half: on SciFact it costs 0.002 nDCG@10 against no floor, and leaves 11 of 30
    # off-topic questions answered instead of 28 at 0.2. In keyword mode, where every hit is
    # keyword-only, 0.2: keyword alone then stays at BM25's level (docs/BENCHMARKS.md).
    min_coverage: float = 0.5
    keyword_min_coverage: float = 0.2
    bm25_k1: float = queries.BM25_K1
    bm25_b: float = queries.BM25_B


DEFAULT_TUNING = Tuning()


def phrases(query: str) -> list[str]:
    """The quoted phrases of a query, which every hit must contain."""
    return [p.strip() for p in _PHRASE.findall(query) if p.strip()]


async def _workspace_ids(
    conn: ReadConnection, principal: Principal, slugs: list[str] | None
) -> list[UUID] | None:
    wanted = slugs
    if principal.workspace_scope is not None:
        # A key bound to one workspace searches that one, whatever it asks for.
        wanted = [
            s for s in (slugs or [principal.workspace_scope]) if s == principal.workspace_scope
        ]
    if wanted is None:
        return None
    ids = await documents_queries.workspace_ids(conn, wanted)
    unknown = sorted(set(wanted) - set(ids))
    if unknown and slugs is not None and principal.workspace_scope is None:
        raise ValidationFailed(f"workspaces: no workspace named {', '.join(unknown)}")
    return list(ids.values())


async def run(
    conn: ReadConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    request: SearchRequest,
    *,
    limit: int | None = None,
    tuning: Tuning = DEFAULT_TUNING,
) -> list[SearchHit]:
    """The search without recording it.

    `limit` may exceed the API's top_k (the evaluation ranks documents from deeper lists).
    """
    query = request.query.strip()
    if not query:
        raise ValidationFailed("query: must not be blank")
    if len(query) > settings.max_query_chars:
        raise ValidationFailed(
            f"query: {len(query):,} characters is over the limit of {settings.max_query_chars:,}"
        )
    limit = limit or request.top_k
    workspace_ids = await _workspace_ids(conn, principal, request.workspaces)
    if workspace_ids == []:
        return []
    mode: SearchMode = request.mode
    embedding = await embedder.embed_query(query) if mode in ("hybrid", "dense") else None
    depth = max(limit, tuning.dense_depth)
    params = queries.SearchParams(
        query=query,
        embedding=embedding,
        use_keyword=mode in ("hybrid", "keyword"),
        caller_id=principal.user_id,
        workspace_ids=workspace_ids,
        tags=request.tags,
        phrases=phrases(query),
        limit=limit,
        dense_depth=depth,
        keyword_depth=max(limit, tuning.keyword_depth),
        postings_per_term=tuning.postings_per_term,
        min_similarity=settings.min_similarity,
        min_coverage=tuning.keyword_min_coverage if mode == "keyword" else tuning.min_coverage,
        rrf_k=tuning.rrf_k,
        dense_weight=tuning.dense_weight,
        keyword_weight=tuning.keyword_weight,
        k1=tuning.bm25_k1,
        b=tuning.bm25_b,
    )
    return await queries.search(conn, params)


async def search(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    request: SearchRequest,
    *,
    door: str = "api",
) -> SearchResult:
    """Search every workspace the caller may see (or the ones asked for) and record the
    question; one that finds nothing is a documentation gap.

    Raises:
        ValidationFailed: a blank or too long query, or an unknown workspace.
    """
    started = time.perf_counter()
    hits = await run(conn, principal, embedder, settings, request)
    similarities = [hit.similarity for hit in hits if hit.similarity is not None]
    await queries.record_question(
        conn,
        user_id=principal.user_id,
        door=door,
        query=request.query.strip(),
        mode=request.mode,
        best_similarity=max(similarities) if similarities else None,
        hit_count=len(hits),
    )
    took_ms = (time.perf_counter() - started) * 1000
    # Logged, not reported: the keyword half's time grows with a word's postings in every
    # document, the caller's or not, so a precise figure would tell a caller whether a word
    # appears in documents it cannot see. The field stays (API.md) and says nothing.
    logger.info("search (%s, %s): %d hits in %.1f ms", door, request.mode, len(hits), took_ms)
    return SearchResult(hits=hits, took_ms=0.0)
