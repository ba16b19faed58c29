"""A search and a passage (ADR 0014): a query of more than 32 words is a passage, whose quotes
are quotation and whose repeated words count; a search's quoted phrases must appear. The
keyword floor asks a passage to cover its rarest lexemes, not its whole idf mass. And the
statement reads no deeper than it needs to."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import ReadConnection
from app.rag import queries, retrieval
from app.rag.embeddings import make_embedder
from app.rag.schemas import SearchMode
from app.search import service as search_service
from app.search.schemas import SearchRequest
from tests.accounts import authorize

# Filler words the keyword half drops (stopwords) and that the test documents do not share.
FILLER = "and then what is it that we all have to be about there if any of those were to do so " * 2


@pytest.fixture(autouse=True)
async def _as_admin(client: httpx.AsyncClient, conn: AsyncConnection) -> None:
    await authorize(client, conn, "admin")


async def _add(client: httpx.AsyncClient, title: str, content: str) -> str:
    response = await client.post("/api/documents", json={"title": title, "content": content})
    assert response.status_code == 201, response.text
    document_id: str = response.json()["id"]
    return document_id


async def _keyword_hits(client: httpx.AsyncClient, query: str) -> list[dict[str, Any]]:
    response = await client.post("/api/search", json={"query": query, "mode": "keyword"})
    assert response.status_code == 200, response.text
    hits: list[dict[str, Any]] = response.json()["hits"]
    return hits


def test_a_query_of_more_than_32_words_is_a_passage() -> None:
    search = " ".join(["word"] * 30)
    assert not retrieval.is_passage(f'"blue green" {search}')
    assert retrieval.is_passage(f'"blue green" {search} more')
    assert retrieval.phrases(f'"blue green" {search}') == ["blue green"]
    assert retrieval.phrases(f'"blue green" {search} more') == []


async def test_a_passage_s_quotes_are_quotation_not_a_filter(client: httpx.AsyncClient) -> None:
    about = await _add(client, "Thesauri", "Thesaurus construction methods are known.")
    passage = f'What is known about thesaurus construction methods and "zebra"? {FILLER}'
    assert retrieval.is_passage(passage)
    assert [hit["document_id"] for hit in await _keyword_hits(client, passage)] == [about]
    # The same quote in a search is a phrase every hit must contain.
    assert await _keyword_hits(client, 'thesaurus construction methods "zebra"') == []


async def test_a_word_a_passage_repeats_weighs_more(client: httpx.AsyncClient) -> None:
    # Two documents alike but for their subject; the passage names one subject three times.
    cats = await _add(client, "Notes", "Catalogues of the collection.")
    maps = await _add(client, "Notes", "Cartography of the collection.")
    passage = (
        "Catalogues, catalogues, catalogues of the collection, and then cartography of the "
        f"collection? {FILLER}"
    )
    assert retrieval.is_passage(passage)
    assert [hit["document_id"] for hit in await _keyword_hits(client, passage)] == [cats, maps]


async def test_a_passage_needs_to_cover_its_rarest_words_not_all_of_them(
    client: httpx.AsyncClient, conn: AsyncConnection, settings: Settings
) -> None:
    target = await _add(client, "Indexing", "Automatic indexing descriptors.")
    # Twenty other words, each in two of ten other documents: commoner than the target's three.
    others = [f"{stem}ology" for stem in "abcdefghijklmnopqrst"]
    for i in range(10):
        words = [others[(2 * i + k) % 20] for k in range(4)]
        await _add(client, f"Other {i}", " ".join(words) + ".")
    passage = f"automatic indexing descriptors {' '.join(others)} {FILLER}"
    assert retrieval.is_passage(passage)

    async def keyword_documents(tuning: retrieval.Tuning) -> set[str]:
        request = SearchRequest(query=passage, mode="keyword", top_k=20)
        hits = await search_service.rank(
            ReadConnection(conn),
            LOCAL_ADMIN,
            make_embedder(settings),
            settings,
            request,
            tuning=tuning,
        )
        return {str(hit.document_id) for hit in hits}

    # The target covers its three words, 3 of the passage's 8 rarest (over a third of their idf
    # mass) but only 3 of 23 lexemes in all (under the fifth the keyword floor asks).
    assert target in await keyword_documents(retrieval.DEFAULT_TUNING)
    every_lexeme = replace(retrieval.DEFAULT_TUNING, coverage_terms=1000)
    assert target not in await keyword_documents(every_lexeme)


def test_a_lone_dense_search_reads_its_limit_and_a_fused_or_filtered_one_reads_deeper() -> None:
    def depth(query: str, mode: SearchMode, tags: list[str] | None = None) -> int:
        return retrieval.search_params(
            query,
            None,
            Settings(),
            mode=mode,
            caller_id=None,
            workspace_ids=None,
            tags=tags,
            limit=10,
        ).dense_depth

    assert depth("rollback steps", "dense") == 10
    assert depth("rollback steps", "hybrid") == retrieval.DEFAULT_TUNING.dense_depth
    assert depth("rollback steps", "dense", tags=["ops"]) == retrieval.DEFAULT_TUNING.dense_depth
    assert depth('"rollback steps"', "dense") == retrieval.DEFAULT_TUNING.dense_depth


async def test_vectors_are_stored_in_their_row(conn: AsyncConnection) -> None:
    storage = (
        await conn.execute(
            text(
                "SELECT attstorage FROM pg_attribute "
                "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
            )
        )
    ).scalar_one()
    assert storage in (b"m", "m")


async def test_the_hnsw_candidates_grow_with_the_corpus(conn: AsyncConnection) -> None:
    read = ReadConnection(conn)
    await conn.execute(text("UPDATE corpus_stats SET chunk_count = 50000"))
    assert await queries.size_vector_search(read, 10) == queries.HNSW_EF_SEARCH_MIN
    assert await queries.size_vector_search(read, 300) == 300
    await conn.execute(text("UPDATE corpus_stats SET chunk_count = 900000"))
    assert await queries.size_vector_search(read, 10) == 900000 // queries.HNSW_CHUNKS_PER_CANDIDATE
    await conn.execute(text("UPDATE corpus_stats SET chunk_count = 5000000"))
    assert await queries.size_vector_search(read, 10) == queries.HNSW_EF_SEARCH_MAX
    # What it returns is what the walk will keep.
    assert (await conn.execute(text("SHOW hnsw.ef_search"))).scalar_one() == str(
        queries.HNSW_EF_SEARCH_MAX
    )
