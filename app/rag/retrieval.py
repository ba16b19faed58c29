"""Hybrid retrieval (DESIGN.md §4): a dense top-k on the HNSW index and a BM25 top-k over the
postings, fused by their scaled scores in one SQL statement that also applies the caller's
visibility and workspace scope. The ranking only: the search service (`app.search.service`)
checks the request, resolves its workspaces and records the question."""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

import numpy as np

from app.config import Settings
from app.db.engine import ReadConnection, SideRead, SideReads
from app.observe import metrics, tracing
from app.rag import identifiers, queries
from app.rag.embeddings.base import QueryEmbedder
from app.rag.schemas import SearchHit, SearchMode

_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True, slots=True)
class Tuning:
    """The fusion's knobs, set by measurement on SciFact (docs/BENCHMARKS.md)."""

    dense_depth: int = 100
    keyword_depth: int = 100
    postings_per_term: int = 1000
    # Fusion: each half's scores scaled to its own list (the dense similarity by min-max over
    # its candidates, BM25 by its best score), then a weighted sum whose dense share follows how
    # sure each half is for this query (`queries._FUSE_HYBRID`): the dense half's confidence,
    # its best similarity above the relevance floor as a share of the most it could be, times
    # what the keyword half leaves open, 1 minus its best BM25 as a share of the query's
    # attainable BM25 (every lexeme matched without end). No constant share is right on every
    # collection: codedocs' identifier queries want the dense half near silent (keyword 0.9180
    # nDCG@10; hybrid 0.9216 at a share of 0.02, 0.9122 at 0.3), SciFact and CISI want it near
    # 0.4 (0.7385 and 0.4570 there). The halves' best hits tell them apart: the keyword half's
    # matches a codedocs query almost whole (a median 0.61 of its attainable BM25; SciFact 0.37,
    # CISI 0.21), and the dense half's stands higher on prose (a median best similarity of 0.66
    # on SciFact, 0.67 on CISI, 0.50 on codedocs). Over both halves' dumped candidates
    # (scripts/fuse_offline.py), nDCG@10 SciFact / CISI / codedocs: this rule 0.7383 / 0.4523 /
    # 0.9195; ADR 0033's constant share of 0.35 0.7346 / 0.4483 / 0.9078; 0.8 × the dense
    # confidence alone 0.7393 / 0.4571 / 0.9178 (docs/BENCHMARKS.md, ADR 0036).
    #
    # The dense share's factor when the query names an identifier (a path, a dotted or
    # snake-case name, a flag: `identifiers.lexable` finds names in it): an exact name is
    # evidence the vector cannot read (ADR 0028); codedocs 0.9189 -> 0.9195, SciFact and CISI
    # within 0.0004.
    named_dense_factor: float = 0.5
    # A keyword-only hit must cover this share of the query's lexemes, weighted by idf. In
    # hybrid mode half: on SciFact it costs 0.002 nDCG@10 against no floor, and leaves 11 of 30
    # off-topic questions answered instead of 28 at 0.2. In keyword mode, where every hit is
    # keyword-only, 0.2: keyword alone then stays at BM25's level (docs/BENCHMARKS.md).
    min_coverage: float = 0.5
    keyword_min_coverage: float = 0.2
    # Whether a repeated query word counts as often as it is said: in passages only (above).
    repeats: Literal["never", "passages", "always"] = "passages"
    # The floor's idf mass: the query's rarest this many lexemes' (ADR 0014).
    coverage_terms: int = 4
    # In hybrid mode, fewer postings for common lexemes, by their idf's share of the rarest
    # one's: the keyword half runs beside the dense half (ADR 0015) and its CPU slows it, and
    # on SciFact's claims this half cost 3.1 ms at p50 instead of 3.9. nDCG@10 of hybrid: SciFact
    # 0.7234 → 0.7257, CISI 0.4408 → 0.4329. Keyword mode reads every lexeme's postings up to
    # the cut: there it cost SciFact 0.009, and BM25's level is its bar (docs/BENCHMARKS.md).
    # Off since fusion reads the scores: BM25 from fewer postings is a rougher score, and the
    # full postings gave hybrid SciFact 0.7315 -> 0.7369, CISI 0.4546 -> 0.4601 (codedocs
    # 0.9071 either way) over the dumped candidates, at about 0.8 ms of the keyword half.
    postings_by_idf: bool = False
    # BM25 at query time: k1 1.2 and b 0.5 held the keyword half at BM25's level on both CISI's
    # paragraphs and SciFact's claims (ADR 0014; 0.9 / 0.4 under-normalised CISI's lengths).
    bm25_k1: float = 1.2
    bm25_b: float = 0.5


DEFAULT_TUNING = Tuning()


# A query of up to this many words is a search: its quoted phrases are search syntax, and each
# of its words counts once (a word typed twice is no clue). A longer one is a passage (a
# paragraph-long question, a pasted text): its quotes are quotation, and a word it repeats is
# what it is about, weighted by how often it is said, as Lucene's BM25 does. On CISI, whose
# paragraph queries quote single words in passing and repeat their subject, requiring the quotes
# cost the keyword half 0.02 nDCG@10 and counting each word once 0.06; on SciFact's claims
# (searches, all but one) counting repeats cost 0.003 (docs/BENCHMARKS.md, ADR 0014).
PASSAGE_WORDS = 32


# A hybrid query of more words than this reads its halves at once, when it may (`run`): the
# keyword half's cost grows with the query's words, and at 100k chunks it cost 10 ms on 12-20
# words, as much as the dense half, against 3 ms on 2-6 words, where the third statement the
# fusion then needs ate the gain (docs/BENCHMARKS.md, ADR 0015).
APART_FROM_WORDS = 6
# ... and so does any hybrid query once the HNSW walk keeps more candidates than its floor (a
# corpus of over 300k chunks): the walk is long there, and the keyword half after it in one
# statement is time the search apart does not spend. At a million chunks, 2-6 words: 43.0 /
# 48.5 ms at p50 / p95 in one statement, 41.4 / 47.0 apart (docs/BENCHMARKS.md).
APART_FROM_CANDIDATES = queries.HNSW_EF_SEARCH_MIN


def is_passage(query: str) -> bool:
    return len(query.split()) > PASSAGE_WORDS


def phrases(query: str) -> list[str]:
    """The quoted phrases of a search, which every hit must contain (none for a passage)."""
    if is_passage(query):
        return []
    return [p.strip() for p in _PHRASE.findall(query) if p.strip()]


def search_params(
    query: str,
    embedding: np.ndarray | None,
    settings: Settings,
    *,
    mode: SearchMode,
    caller_id: UUID | None,
    workspace_ids: list[UUID] | None,
    tags: list[str] | None,
    limit: int,
    tuning: Tuning = DEFAULT_TUNING,
    document_ids: list[UUID] | None = None,
    stale: bool | None = None,
) -> queries.SearchParams:
    """The statement's parameters for a query (its vector computed already in dense modes)."""
    quoted = phrases(query)
    # Alone and unfiltered, the dense half's top `limit` is the answer: reading deeper only
    # fetched rows to drop them. Fused or filtered, it reads `dense_depth`.
    alone = mode == "dense" and not (
        tags or quoted or document_ids is not None or stale is not None
    )
    named = bool(identifiers.lexable(query).wholes)
    return queries.SearchParams(
        query=query,
        embedding=embedding,
        use_keyword=mode in ("hybrid", "keyword"),
        caller_id=caller_id,
        workspace_ids=workspace_ids,
        document_ids=document_ids,
        stale=stale,
        tags=tags,
        phrases=quoted,
        limit=limit,
        dense_depth=limit if alone else max(limit, tuning.dense_depth),
        keyword_depth=max(limit, tuning.keyword_depth),
        postings_per_term=tuning.postings_per_term,
        min_similarity=settings.min_similarity,
        min_coverage=tuning.keyword_min_coverage if mode == "keyword" else tuning.min_coverage,
        repeats=tuning.repeats == "always" or (tuning.repeats == "passages" and is_passage(query)),
        postings_by_idf=tuning.postings_by_idf and mode == "hybrid",
        coverage_terms=tuning.coverage_terms,
        dense_factor=tuning.named_dense_factor if named else 1.0,
        k1=tuning.bm25_k1,
        b=tuning.bm25_b,
    )


async def run(
    conn: ReadConnection,
    embedder: QueryEmbedder,
    settings: Settings,
    query: str,
    *,
    mode: SearchMode,
    caller_id: UUID | None,
    workspace_ids: list[UUID] | None,
    tags: list[str] | None,
    limit: int,
    tuning: Tuning = DEFAULT_TUNING,
    document_ids: list[UUID] | None = None,
    side: SideReads | None = None,
    stale: bool | None = None,
) -> list[SearchHit]:
    """Rank the chunks `caller_id` may see for a query the search service has checked, in
    `workspace_ids` (None: every workspace), of `document_ids` only when given. It ranks, and
    records nothing. With `side`, a long hybrid search (any, on a large corpus) reads its
    keyword half on a second connection while the request's reads the dense half, if one is
    free (ADR 0015).
    """
    if workspace_ids == [] or document_ids == []:
        return []
    traced = tracing.span("search", {"corpus.search.mode": mode, "corpus.search.limit": limit})
    with metrics.SEARCH_SECONDS.labels(mode).time(), traced:
        embedding = None
        if mode in ("hybrid", "dense"):
            with metrics.search_part(mode, "query_embedding"):
                embedding = await embedder.embed_query(query)
        params = search_params(
            query,
            embedding,
            settings,
            mode=mode,
            caller_id=caller_id,
            workspace_ids=workspace_ids,
            tags=tags,
            limit=limit,
            tuning=tuning,
            document_ids=document_ids,
            stale=stale,
        )
        if side is not None and mode == "hybrid":
            candidates = await queries.size_vector_search(conn, params.dense_depth)
            if len(query.split()) > APART_FROM_WORDS or candidates > APART_FROM_CANDIDATES:
                async with side.reserve() as other:
                    if other is not None:
                        return await _halves_apart(conn, other, params)
            with metrics.search_part(mode, "ranking"):
                return await queries.search(conn, params, sized=True)
        with metrics.search_part(mode, "ranking"):
            return await queries.search(conn, params)


async def _halves_apart(
    conn: ReadConnection, side: SideRead, params: queries.SearchParams
) -> list[SearchHit]:
    """The hybrid search as two statements at once and a third that fuses them: on natural
    queries the halves cost about the same, and one after the other in one statement they took
    their sum (docs/BENCHMARKS.md). `conn`'s vector search is sized already."""

    ranked: asyncio.Future[queries.Half] = asyncio.get_running_loop().create_future()

    async def keyword() -> None:
        async with side() as other:
            # Handed over before the side transaction ends: its rollback is not on the way.
            with metrics.search_part("hybrid", "keyword"):
                half = await queries.keyword_half(other, params)
            ranked.set_result(half)

    keyword_task = asyncio.create_task(keyword())
    try:
        with metrics.search_part("hybrid", "vector_walk"):
            dense = await queries.dense_half(conn, params)
        # The keyword half's ranking, or its failure if it failed before handing one over.
        either: list[asyncio.Future[Any]] = [ranked, keyword_task]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not ranked.done():
            keyword_task.result()
        with metrics.search_part("hybrid", "fusion"):
            hits = await queries.fuse(conn, params, dense, ranked.result())
    except BaseException:
        # Not left running on a connection nobody waits for; its own failure, if any, is
        # beside the point now.
        keyword_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await keyword_task
        raise
    await keyword_task  # its rollback, long done by now
    return hits
