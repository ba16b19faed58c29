"""Tune the fusion on a BEIR folder: ingest once (through the product's ingest, in a throwaway
database), then score several `retrieval.Tuning` variants on the same index.

    .venv/bin/python scripts/tune_retrieval.py --data ../shared/bench-data/scifact

Settings come from the environment as for `corpus` (EMBEDDINGS_PROVIDER, CORPUS_DATA_DIR);
embeddings are cached in CORPUS_DATA_DIR/cache. Prints one line of metrics per variant.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from app.access.principal import LOCAL_ADMIN
from app.bench.cache import CachingEmbedder
from app.bench.evaluation import (
    ingest_corpus,
    load_dataset,
    prepare_embeddings,
    rank_documents,
    throwaway_database,
)
from app.bench.metrics import summarise
from app.config import get_settings
from app.db import embedded
from app.rag.embeddings import make_embedder
from app.rag.retrieval import DEFAULT_TUNING, Tuning
from app.rag.schemas import SearchMode, SearchRequest
from app.search.service import rank

BASE = DEFAULT_TUNING
VARIANTS: list[tuple[str, SearchMode, Tuning]] = [
    ("dense", "dense", BASE),
    ("keyword", "keyword", BASE),
    ("hybrid", "hybrid", BASE),
    ("keyword once", "keyword", replace(BASE, repeats=False)),
    ("keyword k1=0.9 b=0.4", "keyword", replace(BASE, bm25_k1=0.9, bm25_b=0.4)),
    ("keyword k1=1.2 b=0.75", "keyword", replace(BASE, bm25_k1=1.2, bm25_b=0.75)),
    ("keyword k1=1.5 b=0.75", "keyword", replace(BASE, bm25_k1=1.5, bm25_b=0.75)),
    ("keyword cover 4", "keyword", replace(BASE, coverage_terms=4)),
    ("keyword cover 8", "keyword", replace(BASE, coverage_terms=8)),
    ("keyword coverage 0", "keyword", replace(BASE, keyword_min_coverage=0.0)),
    ("keyword 500/term", "keyword", replace(BASE, postings_per_term=500)),
    ("hybrid once", "hybrid", replace(BASE, repeats=False)),
    ("hybrid k1=1.2 b=0.75", "hybrid", replace(BASE, bm25_k1=1.2, bm25_b=0.75)),
    ("hybrid coverage 0.2", "hybrid", replace(BASE, min_coverage=0.2)),
    ("hybrid rrf_k=20", "hybrid", replace(BASE, rrf_k=20)),
    ("hybrid rrf_k=40", "hybrid", replace(BASE, rrf_k=40)),
    ("hybrid keyword weight 1.25", "hybrid", replace(BASE, keyword_weight=1.25)),
    ("hybrid keyword weight 1.5", "hybrid", replace(BASE, keyword_weight=1.5)),
    ("hybrid rrf_k=20 keyword weight 1.25", "hybrid", replace(BASE, rrf_k=20, keyword_weight=1.25)),
]


# Questions SciFact cannot answer (software, cooking, sport, travel): a good floor returns
# nothing for them, which is what makes a documentation gap visible.
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


def progress(stage: str, done: int, total: int) -> None:
    print(f"\r{stage}: {done}/{total}", end="", file=sys.stderr, flush=True)


async def main(folder: Path, only: list[str]) -> None:
    settings = get_settings()
    dataset = load_dataset(folder)
    embedder = CachingEmbedder(
        make_embedder(settings), settings.data_dir / "cache" / "embeddings.sqlite"
    )
    try:
        await prepare_embeddings(embedder, dataset.corpus, progress)
        async with throwaway_database(settings, "corpus_tune") as db:
            started = time.perf_counter()
            ids = await ingest_corpus(db, embedder, settings, dataset.corpus, progress)
            print(f"\ningested in {time.perf_counter() - started:.0f}s", file=sys.stderr)
            for name, mode, tuning in VARIANTS:
                if only and not any(word in name for word in only):
                    continue
                started = time.perf_counter()
                rankings = await rank_documents(
                    db, embedder, settings, dataset, ids, mode, 100, tuning
                )
                metrics = summarise(rankings, dataset.qrels)
                row = {"variant": name, **metrics, "seconds": round(time.perf_counter() - started)}
                print(json.dumps(row), flush=True)
            for name, mode, tuning in VARIANTS:
                if mode != "hybrid" or (only and not any(word in name for word in only)):
                    continue
                answered = 0
                for question in OFF_TOPIC:
                    async with db.read() as conn:
                        hits = await rank(
                            conn,
                            LOCAL_ADMIN,
                            embedder,
                            settings,
                            SearchRequest(query=question),
                            tuning=tuning,
                        )
                    answered += bool(hits)
                print(
                    json.dumps(
                        {
                            "variant": name,
                            "off_topic_answered": answered,
                            "off_topic": len(OFF_TOPIC),
                        }
                    ),
                    flush=True,
                )
    finally:
        await embedder.aclose()
        if not settings.database_url:
            embedded.release(settings.data_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    asyncio.run(main(args.data, args.only))
