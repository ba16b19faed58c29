"""Search and ask, as both doors offer them: the request checked, its workspaces resolved through
the documents service, the ranking (`app.rag.retrieval`) run, and the question recorded with
the door it came through. A question that finds nothing is a documentation gap."""

from __future__ import annotations

import logging
import time

from pydantic import ValidationError

from app.access.principal import Principal
from app.config import Settings
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.errors import ValidationFailed
from app.rag import extractive, retrieval
from app.rag.embeddings.base import Embedder
from app.rag.schemas import Answer, SearchHit, SearchRequest, SearchResult
from app.search import queries

logger = logging.getLogger(__name__)


def _query(settings: Settings, request: SearchRequest) -> str:
    """The query as it is searched: stripped, and within its limit.

    Raises:
        ValidationFailed: blank, or over CORPUS_MAX_QUERY_CHARS.
    """
    query = request.query.strip()
    if not query:
        raise ValidationFailed("query: must not be blank")
    if len(query) > settings.max_query_chars:
        raise ValidationFailed(
            f"query: {len(query):,} characters is over the limit of {settings.max_query_chars:,}"
        )
    return query


async def rank(
    conn: ReadConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    request: SearchRequest,
    *,
    limit: int | None = None,
    tuning: retrieval.Tuning = retrieval.DEFAULT_TUNING,
) -> list[SearchHit]:
    """The hits `search` would return, without recording the question (for the evaluation and
    the load bench). `limit` may exceed the API's top_k (the evaluation ranks documents from
    deeper lists).

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query, or an
        unknown workspace.
    """
    principal.require("search", "your role may not search")
    query = _query(settings, request)
    workspace_ids = await documents_service.search_scope(conn, principal, request.workspaces)
    return await retrieval.run(
        conn,
        embedder,
        settings,
        query,
        mode=request.mode,
        caller_id=principal.user_id,
        workspace_ids=workspace_ids,
        tags=request.tags,
        limit=limit or request.top_k,
        tuning=tuning,
    )


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
    question.

    Raises:
        ValidationFailed: a blank or too long query, or an unknown workspace.
    """
    started = time.perf_counter()
    hits = await rank(conn, principal, embedder, settings, request)
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


async def ask(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    question: str,
    *,
    mode: str,
    door: str,
) -> Answer:
    """Answer a question from the corpus (extractively, until the answering agents land),
    recording it as a search.

    Raises:
        ValidationFailed: a blank, too long or malformed question.
    """
    try:
        request = SearchRequest(query=question, top_k=extractive.PASSAGES)
    except ValidationError as exc:
        raise ValidationFailed.from_pydantic(exc) from None
    result = await search(conn, principal, embedder, settings, request, door=door)
    return extractive.answer(result.hits, mode=mode)
