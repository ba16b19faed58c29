"""Hybrid search: both halves reach the fused list, the floor can say "nothing", the plan uses
the indexes, and visibility holds inside the SQL."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any
from uuid import UUID

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.config import Settings
from app.db.engine import Database, ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate, DocumentFilters
from app.rag import queries, retrieval
from app.rag.embeddings import make_embedder
from app.rag.schemas import SearchMode
from app.search import service as search_service
from app.search.schemas import SearchRequest
from tests.accounts import authorize, person


@pytest.fixture(autouse=True)
async def _as_admin(client: httpx.AsyncClient, conn: AsyncConnection) -> None:
    """These tests act as an admin with an API key."""
    await authorize(client, conn, "admin")


async def _add(client: httpx.AsyncClient, title: str, content: str, **extra: Any) -> str:
    response = await client.post(
        "/api/documents", json={"title": title, "content": content, **extra}
    )
    assert response.status_code == 201, response.text
    document_id: str = response.json()["id"]
    return document_id


async def _search(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/api/search", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def _questions(conn: AsyncConnection) -> list[Any]:
    rows = await conn.execute(text("SELECT query, answered, hit_count, door FROM questions"))
    return list(rows)


async def test_hits_found_by_only_one_half_both_reach_the_fused_list(
    client: httpx.AsyncClient,
) -> None:
    # With the hash embedder, dense similarity is overlap of raw words (stopwords included),
    # while the keyword half sees stemmed lexemes without stopwords: each document below is
    # visible to one half only.
    dense_only = await _add(client, "Habits", "What should we do when it is late? We do it.")
    keyword_only = await _add(client, "Services", "Deployed services restart nightly.")
    result = await _search(client, query="what should we do when it is deploying", top_k=10)
    hits = {hit["document_id"]: hit for hit in result["hits"]}
    assert hits[dense_only]["vec_rank"] is not None
    assert hits[dense_only]["kw_rank"] is None
    assert hits[keyword_only]["kw_rank"] is not None
    assert hits[keyword_only]["vec_rank"] is None
    assert hits[keyword_only]["matched_terms"] == ["deploy"]


async def test_a_hit_found_by_both_halves_ranks_first(client: httpx.AsyncClient) -> None:
    both = await _add(client, "Rollback", "Rollback the deploy with make rollback.")
    await _add(client, "Cooking", "Simmer the tomato sauce for an hour.")
    await _add(client, "Billing", "Invoices are sent on the first of the month.")
    result = await _search(client, query="rollback the deploy")
    top = result["hits"][0]
    assert top["document_id"] == both
    assert top["vec_rank"] == 1
    assert top["kw_rank"] == 1
    assert top["similarity"] > 0.5
    # The best of each half scores 1 there: the weighed sum of two bests is 1.
    assert top["score"] == pytest.approx(1.0)
    assert top["heading_path"] == []
    assert result["took_ms"] >= 0


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
async def test_a_vector_without_direction_is_similar_to_nothing(
    client: httpx.AsyncClient, mode: str
) -> None:
    # The hash embedder gives the zero vector to text without a word; its cosine distance to
    # anything is NaN, which PostgreSQL sorts above every number (found by the fuzz run).
    await _add(client, "Punctuation", "{- -}")
    await _add(client, "Rollback", "Rollback the deploy with make rollback.")
    for query in ("{-", "rollback"):
        for hit in (await _search(client, query=query, mode=mode))["hits"]:
            assert hit["vec_rank"] is None or hit["similarity"] is not None, hit
            assert hit["score"] is not None, hit
    assert (await _search(client, query="{-", mode="dense"))["hits"] == []


@pytest.mark.parametrize("mode", ["dense", "keyword"])
async def test_single_modes_use_one_half(client: httpx.AsyncClient, mode: str) -> None:
    await _add(client, "Rollback", "Rollback the deploy with make rollback.")
    hits = (await _search(client, query="rollback the deploy", mode=mode))["hits"]
    assert hits
    for hit in hits:
        assert (hit["vec_rank"] is None) == (mode == "keyword")
        assert (hit["kw_rank"] is None) == (mode == "dense")


async def test_an_unanswerable_question_finds_nothing_and_is_recorded_as_a_gap(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await _add(client, "Rollback", "Rollback the deploy with make rollback.")
    result = await _search(client, query="purple elephant carburetor sonnet")
    assert result["hits"] == []
    [question] = [q for q in await _questions(conn) if q.query.startswith("purple elephant")]
    assert question.answered is False
    assert question.door == "api"


async def test_a_keyword_hit_covering_too_little_of_the_query_is_dropped(
    client: httpx.AsyncClient,
) -> None:
    await _add(client, "Kubernetes", "Kubernetes pods restart on failure.")
    # One rare lexeme of five: below the coverage floor, and no dense similarity either.
    result = await _search(
        client, query="kubernetes zebra quantum violin marmalade", mode="keyword"
    )
    assert result["hits"] == []


async def test_hybrid_by_idf_reads_fewer_postings_of_a_common_lexeme_than_keyword_mode(
    client: httpx.AsyncClient, conn: AsyncConnection, settings: Settings
) -> None:
    for n, when in enumerate(["early", "late", "today", "again", "twice", "now"]):
        await _add(client, f"Kitchen note {n}", f"The kettle is on the stove {when}.")
    await _add(client, "Zoo", "The aardvark sleeps all day.")
    # Off by default since fusion weighs BM25 scores (retrieval.Tuning), but kept as a lever.
    tuning = replace(retrieval.DEFAULT_TUNING, postings_per_term=4, postings_by_idf=True)

    async def ranked(mode: SearchMode) -> set[UUID]:
        params = retrieval.search_params(
            "aardvark kettle",
            None,
            settings,
            mode=mode,
            caller_id=None,
            workspace_ids=None,
            tags=None,
            limit=10,
            tuning=tuning,
        )
        return set((await queries.keyword_half(ReadConnection(conn), params)).ids)

    every_posting, by_idf = await ranked("keyword"), await ranked("hybrid")
    # Keyword mode: four kettle postings (the cut) and the aardvark. Hybrid: the rarest lexeme
    # keeps its four, "kettle" (idf about an eighth of the aardvark's) one.
    assert len(every_posting) == 5
    assert len(by_idf) == 2
    assert by_idf < every_posting


async def test_quoted_phrases_must_appear(client: httpx.AsyncClient) -> None:
    exact = await _add(client, "A", "The blue green deploy switches traffic.")
    await _add(client, "B", "The green deploy is blue in places.")
    hits = (await _search(client, query='"blue green deploy"'))["hits"]
    assert [hit["document_id"] for hit in hits] == [exact]


async def test_filters_by_workspace_and_tag(client: httpx.AsyncClient) -> None:
    await client.post("/api/workspaces", json={"slug": "ops", "title": "Ops"})
    in_ops = await _add(client, "Ops rollback", "Rollback steps.", workspace="ops", tags=["x"])
    in_default = await _add(client, "Rollback", "Rollback steps too.", tags=["y"])
    by_workspace = await _search(client, query="rollback steps", workspaces=["ops"])
    by_tag = await _search(client, query="rollback steps", tags=["y"])
    assert {h["document_id"] for h in by_workspace["hits"]} == {in_ops}
    assert {h["document_id"] for h in by_tag["hits"]} == {in_default}


@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "   "},
        {"query": "x" * 2001},
        {"query": "ok", "top_k": 0},
        {"query": "ok", "top_k": 101},
        {"query": "ok", "top_k": "ten"},
        {"query": "ok", "mode": "fuzzy"},
        {"query": 42},
        {"query": "ok", "workspaces": ["no-such-workspace"]},
        {"query": "ok", "unknown": True},
    ],
)
async def test_bad_searches_are_refused_and_record_nothing(
    client: httpx.AsyncClient, conn: AsyncConnection, body: dict[str, Any]
) -> None:
    before = await _questions(conn)
    response = await client.post("/api/search", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert await _questions(conn) == before


async def test_edits_move_search_results(client: httpx.AsyncClient) -> None:
    document = await _add(client, "Runbook", "Restart the queue worker.")
    await client.patch(f"/api/documents/{document}", json={"content": "Drain the cache nodes."})
    old = await _search(client, query="restart queue worker", mode="keyword")
    new = await _search(client, query="drain cache nodes", mode="keyword")
    assert old["hits"] == []
    assert [h["document_id"] for h in new["hits"]] == [document]
    await client.patch(f"/api/documents/{document}", json={"title": "Zookeeper notes"})
    renamed = await _search(client, query="zookeeper", mode="keyword")
    assert [h["document_id"] for h in renamed["hits"]] == [document]


# --- visibility, through the services with two real people ------------------------------------


async def test_private_documents_never_reach_another_person(
    conn: AsyncConnection, settings: Settings
) -> None:
    write = WriteConnection(ReadConnection(conn))
    embedder = make_embedder(settings)
    alice = await person(conn, "alice@example.com")
    bob = await person(conn, "bob@example.com")
    admin = await person(conn, "admin@example.com", "admin")
    secret = await documents_service.create(
        write,
        alice,
        embedder,
        settings,
        DocumentCreate(
            title="Merger plan", content="Acquire Zyxcorp quietly.", visibility="private"
        ),
    )
    await documents_service.create(
        write, bob, embedder, settings, DocumentCreate(title="Lunch", content="Zyxcorp tacos.")
    )
    request = SearchRequest(query="acquire zyxcorp merger plan")
    for principal in (bob, admin):
        hits = await search_service.rank(write, principal, embedder, settings, request)
        assert secret.id not in {hit.document_id for hit in hits}
        listed = await documents_service.list_documents(
            write, principal, DocumentFilters(), limit=200, cursor=None
        )
        assert secret.id not in {d.id for d in listed.items}
        assert await documents_service.get(write, principal, secret.id) is None
    own = await search_service.rank(write, alice, embedder, settings, request)
    assert own[0].document_id == secret.id


async def test_private_documents_do_not_move_anyone_elses_scores(
    conn: AsyncConnection, settings: Settings
) -> None:
    write = WriteConnection(ReadConnection(conn))
    embedder = make_embedder(settings)
    alice = await person(conn, "alice@example.com")
    bob = await person(conn, "bob@example.com")
    await documents_service.create(
        write, bob, embedder, settings, DocumentCreate(title="Notes", content="Quarterly quorum.")
    )
    request = SearchRequest(query="quorum", mode="keyword")
    before = await search_service.rank(write, bob, embedder, settings, request)
    for i in range(5):
        await documents_service.create(
            write,
            alice,
            embedder,
            settings,
            DocumentCreate(title=f"Secret {i}", content="quorum " * (i + 1), visibility="private"),
        )
    after = await search_service.rank(write, bob, embedder, settings, request)
    assert [(h.document_id, h.score) for h in after] == [(h.document_id, h.score) for h in before]


# --- the plan -------------------------------------------------------------------------------


async def test_the_plan_uses_the_hnsw_and_postings_indexes(
    conn: AsyncConnection, settings: Settings
) -> None:
    # Enough rows that the planner prefers the indexes: with 5,000 it sometimes chose a
    # sequential scan and a sort (the HNSW scan reads 200 candidates, HNSW_EF_SEARCH_MIN).
    # The HNSW index is built once over the rows rather than grown row by row (16 s against
    # 1.5 s), as a migration builds it: dropped and created again from its own definition,
    # inside the test's transaction, which is rolled back.
    hnsw = (
        await conn.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_chunks_embedding_hnsw'")
        )
    ).scalar_one()
    await conn.execute(text("DROP INDEX ix_chunks_embedding_hnsw"))
    workspace = (
        await conn.execute(text("SELECT id FROM workspaces WHERE slug = 'default'"))
    ).scalar()
    document = (
        await conn.execute(
            text(
                "INSERT INTO documents (workspace_id, title, content, content_sha256) "
                "VALUES (:w, 'synthetic', 'x', 'x') RETURNING id"
            ),
            {"w": workspace},
        )
    ).scalar()
    await conn.execute(
        text(
            "INSERT INTO chunks (document_id, workspace_id, ordinal, text, start_offset, "
            "end_offset, token_count, embedding, tsv, lexeme_count) "
            "SELECT :d, :w, g, 'word' || g, 0, 1, 1, "
            "  (SELECT array_agg(random())::vector FROM generate_series(1, :dim)), "
            "  to_tsvector('english', 'word' || (g % 500)), 1 "
            "FROM generate_series(1, 12000) AS g"
        ),
        {"d": document, "w": workspace, "dim": settings.embeddings_dim},
    )
    await conn.execute(
        text(
            "INSERT INTO chunk_terms (lexeme, chunk_id, workspace_id, tf, dl, impact) "
            "SELECT 'word' || (ordinal % 500), id, workspace_id, 1, 1, random() FROM chunks"
        )
    )
    await conn.execute(text(hnsw))
    await conn.execute(text("ANALYZE chunks"))
    await conn.execute(text("ANALYZE chunk_terms"))
    embedder = make_embedder(settings)
    params = queries.SearchParams(
        query="word7 word8",
        embedding=await embedder.embed_query("word7 word8"),
        use_keyword=True,
        caller_id=uuid.uuid4(),
        workspace_ids=None,
        tags=None,
        phrases=[],
        limit=10,
        dense_depth=100,
        keyword_depth=100,
        postings_per_term=1000,
        min_similarity=0.0,
        min_coverage=0.0,
    )
    plan = await queries.explain(ReadConnection(conn), params)
    assert "ix_chunks_embedding_hnsw" in plan
    assert "ix_chunk_terms_lexeme_impact" in plan
    assert "Seq Scan on chunks" not in plan
    assert "Seq Scan on chunk_terms" not in plan


async def test_filtered_vector_scans_are_iterative(settings: Settings) -> None:
    # Set per connection by the engine (app/db/engine.py); pgvector adopts it once loaded.
    db = Database(settings.database_url)
    try:
        async with db.read() as conn:
            await conn.execute(text("SELECT embedding FROM chunks LIMIT 1"))
            mode = (await conn.execute(text("SHOW hnsw.iterative_scan"))).scalar()
    finally:
        await db.dispose()
    assert mode == "relaxed_order"


async def test_bm25_statistics_agree_with_a_recount_of_the_chunks_written(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    # Each chunk's length is written with its row, and the statistics follow every add, edit
    # and delete: a recount from the lexemes themselves must give the same figures.
    first = await _add(client, "Rollbacks", "# Deploys\n\nRoll back a deploy with `deploy --undo`.")
    second = await _add(client, "Backups", "Backups run nightly; restore with `corpus restore`.")
    mine = await _add(client, "Private", "Only mine: roll back quietly.", visibility="private")
    edited = await client.patch(
        f"/api/documents/{first}", json={"content": "Roll back twice: roll back, roll back."}
    )
    assert edited.status_code == 200, edited.text
    # Lexemes rewritten in place (a new title), and chunks that start to count (made `org`).
    retitled = await client.patch(f"/api/documents/{first}", json={"title": "Undoing deploys"})
    assert retitled.status_code == 200, retitled.text
    shared = await client.patch(f"/api/documents/{mine}", json={"visibility": "org"})
    assert shared.status_code == 200, shared.text
    assert (await client.delete(f"/api/documents/{second}")).status_code == 204

    lengths = await conn.execute(
        text(
            "SELECT c.lexeme_count, (SELECT coalesce(sum(cardinality(t.positions)), 0) "
            "FROM unnest(c.tsv) AS t) FROM chunks c"
        )
    )
    pairs = list(lengths)
    assert pairs
    assert all(written == recounted for written, recounted in pairs)
    stats = (
        await conn.execute(
            text(
                "SELECT s.chunk_count, s.lexeme_total, "
                "(SELECT count(*) FROM chunks WHERE private_owner_id IS NULL), "
                "(SELECT sum(lexeme_count) FROM chunks WHERE private_owner_id IS NULL) "
                "FROM corpus_stats s"
            )
        )
    ).one()
    assert (stats[0], stats[1]) == (stats[2], stats[3])
    differing = await conn.execute(
        text(
            "SELECT ls.lexeme FROM lexeme_stats ls FULL JOIN ("
            "  SELECT t.lexeme, count(*) AS df FROM chunks c, unnest(c.tsv) AS t"
            "  WHERE c.private_owner_id IS NULL GROUP BY t.lexeme) r ON r.lexeme = ls.lexeme "
            "WHERE coalesce(ls.df, 0) <> coalesce(r.df, 0)"
        )
    )
    assert list(differing) == []


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "dense"])
async def test_near_copies_rank_by_age_not_by_their_random_ids(
    client: httpx.AsyncClient, conn: AsyncConnection, mode: str
) -> None:
    # One README vendored in two packages: the same text scores alike in both halves. Which
    # comes first must not follow the random chunk ids (two ingests of one collection ranked
    # differently): the older document does, and the two share their ranks.
    # Apart in punctuation only, which neither half reads, so not the same content twice.
    first = await _add(client, "Signing keys", "Rotate the signing key before it expires.")
    second = await _add(client, "Signing keys", "Rotate the signing key before it expires!")
    ids = (
        await conn.execute(
            text("SELECT document_id, id FROM chunks WHERE document_id IN (:a, :b)"),
            {"a": first, "b": second},
        )
    ).all()
    chunk = {str(row.document_id): row.id for row in ids}
    # The document whose chunk id sorts last is made the older one.
    older, newer = sorted(chunk, key=lambda d: chunk[d], reverse=True)
    await conn.execute(
        text("UPDATE documents SET created_at = created_at - interval '1 day' WHERE id = :d"),
        {"d": older},
    )
    result = await _search(client, query="rotate the signing key", mode=mode)
    hits = [hit for hit in result["hits"] if hit["document_id"] in chunk]
    assert [hit["document_id"] for hit in hits] == [older, newer]
    assert hits[0]["score"] == hits[1]["score"]
    assert hits[0]["kw_rank"] == hits[1]["kw_rank"]
    assert hits[0]["vec_rank"] == hits[1]["vec_rank"]
