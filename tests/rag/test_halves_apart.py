"""A hybrid search that reads its halves on two connections at once (ADR 0015) returns what the
one statement returns, within the same scope; it uses the side connection only where it pays;
and a failing half leaves no connection behind.

The rows must be committed here: the side connection cannot see a test's open transaction."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.access.principal import Principal
from app.config import Settings
from app.db.engine import Database, ReadConnection, SideReads
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.main import create_app
from app.rag import queries as rag_queries
from app.rag import retrieval
from app.rag.embeddings import make_embedder
from app.rag.embeddings.base import Embedder
from app.rag.schemas import SearchHit, SearchMode
from tests.accounts import authorize, person
from tests.support import CHEAP_ARGON2, app_client, lifespan, make_settings, migrated_database

TEXTS = {
    "Deploying services": "Services deploy nightly from the release branch; a failed deploy "
    "rolls back to the previous release and pages the on-call engineer.",
    "Incident review": "Every incident gets a review within a week: what failed, how the "
    "on-call engineer found it, and which alert should have fired sooner.",
    "Database backups": "The database is backed up every hour; restoring a backup to a new "
    "server takes twenty minutes and is rehearsed each quarter.",
    "Release checklist": "Before a release: changelog written, migrations reviewed, the "
    "release branch green, and the on-call engineer told.",
    "Lunch menu": "Tacos on Tuesday, soup on Thursday, and pizza when a release ships.",
}
# More than retrieval.APART_FROM_WORDS words: these read their halves apart.
LONG = [
    "what happens when a nightly deploy of the services fails and who is paged",
    "how long does restoring a database backup to a new server take in practice",
    "what must be done before a release branch ships and the on-call engineer is told",
    'the "release branch" must be green before the services deploy and roll back',
]
SHORT = ["release branch", "database backup"]


@dataclass
class Corpus:
    db: Database
    settings: Settings
    embedder: Embedder
    alice: Principal
    bob: Principal
    secret: UUID
    tagged: UUID
    workspaces: dict[str, UUID]


async def _person(db: Database, email: str) -> Principal:
    async with db.write() as conn:
        return await person(conn, email)


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str) -> AsyncIterator[Corpus]:
    url = await migrated_database(server_url, Path(settings.data_dir), "corpus_apart")
    own = make_settings(settings.data_dir, database_url=url)
    db = Database(url)
    embedder = make_embedder(own)
    alice = await _person(db, "alice@example.com")
    bob = await _person(db, "bob@example.com")
    async with db.write() as conn:
        await conn.execute(text("INSERT INTO workspaces (slug, title) VALUES ('ops', 'Ops')"))
        workspaces = {
            row.slug: row.id for row in await conn.execute(text("SELECT slug, id FROM workspaces"))
        }
    for i, (title, body) in enumerate(TEXTS.items()):
        async with db.write() as conn:
            await documents_service.create(
                conn,
                alice if i % 2 else bob,
                embedder,
                own,
                DocumentCreate(title=title, content=body, workspace="ops" if i % 2 else None),
            )
    async with db.write() as conn:
        secret = await documents_service.create(
            conn,
            alice,
            embedder,
            own,
            DocumentCreate(
                title="Deploy postmortem",
                content="The nightly deploy of the services failed and paged nobody: the "
                "on-call rota was empty after the release.",
                visibility="private",
            ),
        )
        tagged = await documents_service.create(
            conn,
            bob,
            embedder,
            own,
            DocumentCreate(
                title="Rollback runbook",
                content="Roll a failed deploy back to the previous release, then page the "
                "on-call engineer and open an incident review.",
                tags=["runbook"],
            ),
        )
    try:
        yield Corpus(db, own, embedder, alice, bob, secret.id, tagged.id, workspaces)
    finally:
        await db.dispose()


class CountingSide(SideReads):
    """Side connections on the corpus's database, counted as they are opened."""

    def __init__(self, url: str, limit: int | None = None) -> None:
        super().__init__(url, limit)
        self.opened = 0
        self.open_now = 0
        self.most_open = 0

    @asynccontextmanager
    async def read(self) -> AsyncIterator[ReadConnection]:
        self.opened += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            async with super().read() as conn:
                yield conn
        finally:
            self.open_now -= 1


@pytest.fixture
async def side(corpus: Corpus) -> AsyncIterator[CountingSide]:
    side = CountingSide(corpus.settings.database_url)
    yield side
    await side.dispose()


async def _run(
    corpus: Corpus,
    query: str,
    principal: Principal,
    side: CountingSide | None,
    *,
    mode: SearchMode = "hybrid",
    tags: list[str] | None = None,
    workspaces: list[UUID] | None = None,
    documents: list[UUID] | None = None,
) -> list[SearchHit]:
    async with corpus.db.read() as conn:
        return await retrieval.run(
            conn,
            corpus.embedder,
            corpus.settings,
            query,
            mode=mode,
            caller_id=principal.user_id,
            workspace_ids=workspaces,
            tags=tags,
            limit=10,
            document_ids=documents,
            side=side,
        )


def _seen(hits: list[SearchHit]) -> list[tuple[object, ...]]:
    return [
        (h.chunk_id, h.score, h.vec_rank, h.kw_rank, h.similarity, h.matched_terms) for h in hits
    ]


async def test_apart_returns_what_the_one_statement_returns(
    corpus: Corpus, side: CountingSide
) -> None:
    cases: list[dict[str, Any]] = [
        {},
        {"tags": ["runbook"]},
        {"workspaces": [corpus.workspaces["ops"]]},
        {"documents": [corpus.tagged, corpus.secret]},
    ]
    found = 0
    for principal in (corpus.alice, corpus.bob):
        for query in LONG:
            for case in cases:
                one = await _run(corpus, query, principal, None, **case)
                apart = await _run(corpus, query, principal, side, **case)
                assert _seen(apart) == _seen(one), (principal.email, query, case)
                found += bool(one)
    assert side.opened == 2 * len(LONG) * len(cases)
    # Not a comparison of empty lists: most cases find something.
    assert found >= len(LONG) * len(cases)


async def test_apart_keeps_a_private_document_to_its_owner(
    corpus: Corpus, side: CountingSide
) -> None:
    theirs = await _run(corpus, LONG[0], corpus.bob, side)
    own = await _run(corpus, LONG[0], corpus.alice, side)
    assert corpus.secret not in {hit.document_id for hit in theirs}
    assert corpus.secret in {hit.document_id for hit in own}
    assert side.opened == 2


@pytest.mark.parametrize("mode", ["hybrid", "dense", "keyword"])
async def test_short_queries_and_single_modes_use_no_side_connection(
    corpus: Corpus, side: CountingSide, mode: SearchMode
) -> None:
    queries = SHORT if mode == "hybrid" else SHORT + LONG
    for query in queries:
        assert await _run(corpus, query, corpus.bob, side, mode=mode)
    assert side.opened == 0


async def test_short_queries_read_apart_where_the_vector_walk_is_long(
    corpus: Corpus, side: CountingSide
) -> None:
    # The statistics row says a million chunks: the walk keeps more candidates than its floor.
    # Committed, as the side connection must see the same statistics as the request's.
    async with corpus.db.write() as conn:
        real = (await conn.execute(text("SELECT chunk_count FROM corpus_stats"))).scalar_one()
        await conn.execute(text("UPDATE corpus_stats SET chunk_count = 1000000"))
    try:
        for query in SHORT:
            apart = await _run(corpus, query, corpus.bob, side)
            assert apart
            assert _seen(apart) == _seen(await _run(corpus, query, corpus.bob, None))
        assert side.opened == len(SHORT)
    finally:
        async with corpus.db.write() as conn:
            await conn.execute(text("UPDATE corpus_stats SET chunk_count = :n"), {"n": real})


async def test_a_failing_half_leaves_no_connection_behind(
    corpus: Corpus, side: CountingSide, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing_dense_half(conn: ReadConnection, *args: Any, **kwargs: Any) -> None:
        await conn.execute(text("SELECT 1 / 0"))

    # The dense half fails on the request's connection while the keyword half has started on
    # the side.
    monkeypatch.setattr(rag_queries, "dense_half", failing_dense_half)
    async with corpus.db.read() as conn:
        with pytest.raises(DBAPIError, match="division by zero"):
            await retrieval.run(
                conn,
                corpus.embedder,
                corpus.settings,
                LONG[0],
                mode="hybrid",
                caller_id=corpus.bob.user_id,
                workspace_ids=None,
                tags=None,
                limit=10,
                side=side,
            )
    assert side.opened == 1
    assert side.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    monkeypatch.undo()
    # And the side connections still serve.
    assert await _run(corpus, LONG[1], corpus.bob, side)
    assert side.opened == 2


class FailingSide(CountingSide):
    """Side connections whose transaction has failed before the keyword half runs."""

    @asynccontextmanager
    async def read(self) -> AsyncIterator[ReadConnection]:
        async with super().read() as conn:
            with pytest.raises(DBAPIError, match="division by zero"):
                await conn.execute(text("SELECT 1 / 0"))
            yield conn


async def test_a_failing_keyword_half_fails_the_search_with_its_own_error(
    corpus: Corpus,
) -> None:
    side = FailingSide(corpus.settings.database_url)
    try:
        with pytest.raises(DBAPIError, match="current transaction is aborted"):
            await _run(corpus, LONG[0], corpus.bob, side)
        assert side.opened == 1
        assert side.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    finally:
        await side.dispose()


async def test_searches_beyond_the_limit_run_as_one_statement(corpus: Corpus) -> None:
    # One side connection for six long searches at once: one at a time reads apart, the others
    # do not wait for it, and every one returns what the one statement returns.
    side = CountingSide(corpus.settings.database_url, limit=1)
    try:
        together = await asyncio.wait_for(
            asyncio.gather(*(_run(corpus, query, corpus.bob, side) for query in LONG * 2)),
            timeout=60,
        )
    finally:
        await side.dispose()
    assert 1 <= side.opened < len(LONG) * 2
    assert side.most_open == 1
    for query, hits in zip(LONG * 2, together, strict=True):
        assert _seen(hits) == _seen(await _run(corpus, query, corpus.bob, None))


async def test_the_search_endpoint_reads_its_halves_apart(corpus: Corpus) -> None:
    app = create_app(corpus.settings, argon2=CHEAP_ARGON2)
    async with lifespan(app):
        db: Database = app.state.resources.db
        side = CountingSide(corpus.settings.database_url)
        db.side_reads = side
        try:
            async with app_client(app) as client:
                async with db.write() as conn:
                    await authorize(client, conn, "admin")
                reply = await client.post("/api/search", json={"query": LONG[2]})
                assert reply.status_code == 200, reply.text
                assert reply.json()["hits"]
                short = await client.post("/api/search", json={"query": SHORT[0]})
                assert short.status_code == 200, short.text
        finally:
            await side.dispose()
    assert side.opened == 1


async def _two_chunks(conn: ReadConnection) -> tuple[UUID, UUID]:
    # Two chunks anyone may see: the fusion checks each hit's scope again.
    rows = (
        await conn.execute(
            text("SELECT id FROM chunks WHERE private_owner_id IS NULL ORDER BY id LIMIT 2")
        )
    ).all()
    return rows[0].id, rows[1].id


async def _params(corpus: Corpus, query: str) -> rag_queries.SearchParams:
    return retrieval.search_params(
        query,
        await corpus.embedder.embed_query(query),
        corpus.settings,
        mode="hybrid",
        caller_id=None,
        workspace_ids=None,
        tags=None,
        limit=10,
    )


async def test_a_tie_in_the_fused_score_goes_to_the_hit_with_a_vector_match(
    corpus: Corpus,
) -> None:
    # One chunk first in the dense half only, another first in the keyword half only, the halves
    # weighed alike (a similarity of 1 and a BM25 of half the attainable one: a dense share of
    # 1 × 0.5): the same fused score. The chunk with a similarity wins, whichever id sorts
    # first, so the same corpus ingested twice (new random ids) ranks the same.
    async with corpus.db.read() as conn:
        low, high = await _two_chunks(conn)
        params = await _params(corpus, "release")
        for near, keyword_only in ((low, high), (high, low)):
            hits = await rag_queries.fuse(
                conn,
                params,
                rag_queries.Half(ids=[near], scores=[1.0], ranks=[1]),
                rag_queries.Half(
                    ids=[keyword_only], scores=[1.0], ranks=[1], bm25=[3.0], attainable=6.0
                ),
            )
            assert [h.chunk_id for h in hits] == [near, keyword_only]
            assert hits[0].score == hits[1].score == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("similarity", "bm25", "first"),
    [
        # The dense half sure of its best, the keyword half's best matching a tenth of the
        # query: the vector match first.
        (0.95, 1.0, "dense"),
        # The dense half's best just above the floor, the keyword half's matching nine tenths
        # of the query: the keyword match first.
        (None, 9.0, "keyword"),
    ],
)
async def test_each_half_weighs_as_much_as_it_is_sure(
    corpus: Corpus, similarity: float | None, bm25: float, first: str
) -> None:
    floor = corpus.settings.min_similarity
    best = similarity if similarity is not None else floor + 0.05 * (1 - floor)
    async with corpus.db.read() as conn:
        near, keyword_only = await _two_chunks(conn)
        params = await _params(corpus, "release")
        hits = await rag_queries.fuse(
            conn,
            params,
            rag_queries.Half(ids=[near], scores=[best], ranks=[1]),
            rag_queries.Half(
                ids=[keyword_only], scores=[1.0], ranks=[1], bm25=[bm25], attainable=10.0
            ),
        )
    # The score says what ranked the hit: the dense share is the dense half's confidence times
    # what the keyword half leaves open; each lone candidate is its half's best (1).
    share = (best - floor) / (1 - floor) * (1 - bm25 / 10.0)
    scores = {h.chunk_id: h.score for h in hits}
    assert scores[near] == pytest.approx(share)
    assert scores[keyword_only] == pytest.approx(1 - share)
    assert hits[0].chunk_id == (near if first == "dense" else keyword_only)


async def test_with_no_keyword_match_the_dense_half_weighs_alone(corpus: Corpus) -> None:
    async with corpus.db.read() as conn:
        near, other = await _two_chunks(conn)
        params = await _params(corpus, "release")
        hits = await rag_queries.fuse(
            conn,
            params,
            rag_queries.Half(ids=[near, other], scores=[0.6, 0.5], ranks=[1, 2]),
            rag_queries.Half(ids=[], scores=[], ranks=[], bm25=[], attainable=10.0),
        )
    assert [(h.chunk_id, h.score) for h in hits] == [(near, 1.0), (other, 0.0)]
