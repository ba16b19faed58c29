"""`corpus eval`: retrieval quality on a BEIR-layout folder (corpus.jsonl, queries.jsonl,
qrels.tsv), through the product's own ingest, retrieval service and SQL, in a throwaway
database. A document ranks by its best chunk."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.access.principal import LOCAL_ADMIN
from app.bench import queries as bench_queries
from app.bench.cache import CachingEmbedder
from app.bench.metrics import summarise
from app.config import Settings
from app.db import embedded, migrate, scratch
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.errors import ValidationFailed
from app.rag import index, retrieval
from app.rag.embeddings import make_embedder
from app.rag.embeddings.base import Embedder, QueryEmbedder
from app.rag.schemas import SearchMode
from app.search import service as search_service
from app.search.schemas import SearchRequest

MODES: tuple[SearchMode, ...] = ("dense", "keyword", "hybrid")

# Questions neither benchmark collection (science, library science) can answer: software,
# cooking, sport, travel. A good floor returns nothing for them, which is what keeps a
# documentation gap visible; `corpus eval` reports how many still got hits, beside nDCG.
OFF_TOPIC = [
    "how do I roll back a kubernetes deployment",
    "nginx reverse proxy configuration for websockets",
    "what is the refund policy for annual plans",
    "postgres vacuum settings for large tables",
    "how to rotate the api keys of the billing service",
    "best way to cache npm packages in ci",
    "who is on call this weekend",
    "how long should I boil an egg",
    "recipe for sourdough bread starter",
    "which team won the world cup in 2010",
    "cheap flights from paris to lisbon",
    "how do I reset my laptop password",
    "terraform state locking with s3",
    "react useEffect cleanup function",
    "python asyncio gather vs wait",
    "git rebase interactive squash commits",
    "what time does the office open on friday",
    "purple elephant carburetor sonnet",
    "quarterly sales targets for the emea region",
    "how to configure vpn on ubuntu",
    "docker compose healthcheck syntax",
    "best hiking trails near denver",
    "how to tie a bowline knot",
    "redis eviction policy allkeys lru",
    "migrate jenkins pipelines to github actions",
    "what is our parental leave policy",
    "tomato sauce simmer time",
    "chess opening for beginners",
    "css grid versus flexbox",
    "onboarding checklist for new engineers",
]
# The longest title a document may have (DocumentCreate): longer ones are cut to it.
TITLE_CHARS = 500
# The longest query a search takes (CORPUS_MAX_QUERY_CHARS' default): longer ones are cut to it.
QUERY_CHARS = 2000
Progress = Callable[[str, int, int], None]
# Collections that ship with the project, by name (`corpus eval --data codedocs`): sections of
# the installed packages' READMEs and queries of the identifiers they mark as code, built by
# scripts/make_codedocs_eval.py (app/bench/codedocs/README.md).
BUNDLED = {"codedocs": Path(__file__).parent / "codedocs"}


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    corpus: list[dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_dataset(folder: Path) -> Dataset:
    """Read a BEIR folder; only queries with judgments are kept.

    Raises:
        ValidationFailed: a file is missing or malformed.
    """
    try:
        corpus = [
            json.loads(line)
            for line in (folder / "corpus.jsonl").read_text().splitlines()
            if line.strip()
        ]
        queries = {
            row["_id"]: row["text"]
            for row in (
                json.loads(line)
                for line in (folder / "queries.jsonl").read_text().splitlines()
                if line.strip()
            )
        }
        qrels: dict[str, dict[str, int]] = {}
        with (folder / "qrels.tsv").open() as handle:
            reader = csv.reader(handle, delimiter="\t")
            for row in reader:
                if not row or row[0] == "query-id":
                    continue
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise ValidationFailed(f"{folder} is not a BEIR folder: {exc}") from exc
    judged = {q: text for q, text in queries.items() if q in qrels}
    return Dataset(folder.name, corpus, judged, {q: qrels[q] for q in judged})


@asynccontextmanager
async def throwaway_database(settings: Settings, prefix: str) -> AsyncIterator[Database]:
    """A new database on the configured server (embedded or DATABASE_URL), migrated, dropped
    afterwards."""
    server = await asyncio.to_thread(embedded.resolve_url, settings)
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    url = await scratch.create_database(server, name)
    db: Database | None = None
    try:
        await asyncio.to_thread(migrate.upgrade, settings, url)
        db = Database(url)
        yield db
    finally:
        if db is not None:
            await db.dispose()
        await scratch.drop_database(server, name)


def title_and_text(doc: dict[str, str]) -> tuple[str, str]:
    """A collection's document as the ingest takes it: its title (its id when it has none, cut
    as the ingest stores it) and its text (its title when it has none)."""
    title = (doc.get("title") or "").strip() or str(doc["_id"])
    text = (doc.get("text") or "").strip() or title
    return title[:TITLE_CHARS], text


async def prepare_embeddings(
    embedder: Embedder, corpus: Sequence[dict[str, str]], progress: Progress
) -> None:
    """Embed every chunk the ingest will make (the cache keeps them), a document's chunks in
    one call, as the ingest embeds them. Until the local model ran each text alone (ADR 0028)
    its vectors followed their batch, and batches across documents made vectors the product
    never stored, which moved SciFact's hybrid nDCG@10 by 0.005 (docs/BENCHMARKS.md)."""
    for i, doc in enumerate(corpus, 1):
        title, text = title_and_text(doc)
        texts = [
            index.embedding_text(title, piece.heading_path, piece.text, embedder)
            for piece in index.chunk(text, title=title, embedder=embedder)
        ]
        if texts:
            await embedder.embed_passages(texts)
        if i % 100 == 0 or i == len(corpus):
            progress("embed", i, len(corpus))


async def ingest_corpus(
    db: Database,
    embedder: Embedder,
    settings: Settings,
    corpus: Sequence[dict[str, str]],
    progress: Progress,
) -> dict[str, str]:
    """Ingest through the documents service, one transaction per document; returns the map of
    document ids to the corpus's ids."""
    ids: dict[str, str] = {}
    for i, doc in enumerate(corpus, 1):
        title, text = title_and_text(doc)
        async with db.write() as conn:
            created = await documents_service.create(
                conn,
                LOCAL_ADMIN,
                embedder,
                settings,
                DocumentCreate(title=title, content=text, source=str(doc["_id"])),
            )
        ids[str(created.id)] = str(doc["_id"])
        if i % 100 == 0 or i == len(corpus):
            progress("ingest", i, len(corpus))
    return ids


async def rank_documents(
    db: Database,
    embedder: QueryEmbedder,
    settings: Settings,
    dataset: Dataset,
    ids: dict[str, str],
    mode: SearchMode,
    top_k: int,
    tuning: retrieval.Tuning = retrieval.DEFAULT_TUNING,
) -> dict[str, list[str]]:
    """Each query's documents in order of their best chunk."""
    rankings: dict[str, list[str]] = {}
    for query_id, query in dataset.queries.items():
        request = SearchRequest(query=query[:QUERY_CHARS], mode=mode, top_k=min(top_k, 100))
        async with db.read() as conn:
            hits = await search_service.rank(
                conn, LOCAL_ADMIN, embedder, settings, request, limit=top_k * 3, tuning=tuning
            )
        ranked = list(dict.fromkeys(ids[str(hit.document_id)] for hit in hits))
        rankings[query_id] = ranked[:top_k]
    return rankings


async def off_topic_answered(
    db: Database,
    embedder: QueryEmbedder,
    settings: Settings,
    mode: SearchMode,
    tuning: retrieval.Tuning = retrieval.DEFAULT_TUNING,
) -> int:
    """How many of the off-topic questions still got hits (of `len(OFF_TOPIC)`)."""
    answered = 0
    for question in OFF_TOPIC:
        async with db.read() as conn:
            hits = await search_service.rank(
                conn,
                LOCAL_ADMIN,
                embedder,
                settings,
                SearchRequest(query=question, mode=mode),
                tuning=tuning,
            )
        answered += bool(hits)
    return answered


_KIND = re.compile(r"^([a-z]+)-\d+$")


def by_kind(
    rankings: dict[str, list[str]], qrels: dict[str, dict[str, int]]
) -> dict[str, dict[str, float]]:
    """nDCG@10 and the rest for each kind of query, where the ids name one (`exact-12`,
    `words-13`: the codedocs collection asks each identifier three ways); else nothing."""
    kinds: dict[str, set[str]] = {}
    for query_id in qrels:
        match = _KIND.match(query_id)
        if match is None:
            return {}
        kinds.setdefault(match.group(1), set()).add(query_id)
    if len(kinds) < 2:
        return {}
    return {
        f"kind:{kind}": summarise(rankings, {q: qrels[q] for q in ids})
        for kind, ids in sorted(kinds.items())
    }


async def evaluate(
    settings: Settings,
    folder: Path,
    modes: Sequence[SearchMode],
    top_k: int,
    progress: Progress,
) -> dict[str, Any]:
    """The report of `corpus eval --json`."""
    dataset = load_dataset(BUNDLED.get(str(folder), folder))
    embedder = CachingEmbedder(
        make_embedder(settings), settings.data_dir / "cache" / "embeddings.sqlite"
    )
    try:
        started = time.perf_counter()
        await prepare_embeddings(embedder, dataset.corpus, progress)
        async with throwaway_database(settings, "corpus_eval") as db:
            ids = await ingest_corpus(db, embedder, settings, dataset.corpus, progress)
            ingest_s = time.perf_counter() - started
            # The planner's statistics before the first search, not whenever autovacuum gets to
            # them: on a small collection it chooses between the HNSW index and an exact scan
            # by them, and two runs of CISI on one busy machine differed in dense nDCG@10 by
            # 0.002 (docs/BENCHMARKS.md, 2026-12-06).
            await bench_queries.vacuum_analyze(db.write_engine)
            results: dict[str, Any] = {}
            for mode in modes:
                rankings = await rank_documents(db, embedder, settings, dataset, ids, mode, top_k)
                results[mode] = summarise(rankings, dataset.qrels) | {
                    "off_topic_answered": await off_topic_answered(db, embedder, settings, mode),
                    **by_kind(rankings, dataset.qrels),
                }
                progress(f"search {mode}", len(dataset.queries), len(dataset.queries))
    finally:
        await embedder.aclose()
    return {
        "dataset": dataset.name,
        "docs": len(dataset.corpus),
        "queries": len(dataset.queries),
        "provider": settings.embeddings_provider,
        "model": settings.embeddings_model,
        "top_k": top_k,
        "off_topic": len(OFF_TOPIC),
        "ingest_seconds": round(ingest_s, 1),
        "modes": results,
    }
