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

from app.bench.cache import CachingEmbedder
from app.bench.evaluation import (
    OFF_TOPIC,
    ingest_corpus,
    load_dataset,
    off_topic_answered,
    prepare_embeddings,
    rank_documents,
    throwaway_database,
)
from app.bench.metrics import summarise
from app.config import get_settings
from app.db import embedded
from app.rag.embeddings import make_embedder
from app.rag.retrieval import DEFAULT_TUNING, Tuning
from app.rag.schemas import SearchMode

BASE = DEFAULT_TUNING
VARIANTS: list[tuple[str, SearchMode, Tuning]] = [
    ("hybrid", "hybrid", BASE),
    ("hybrid, identifiers not weighed apart", "hybrid", replace(BASE, named_dense_factor=1.0)),
    ("hybrid dense depth 200", "hybrid", replace(BASE, dense_depth=200, keyword_depth=200)),
    ("hybrid postings 500", "hybrid", replace(BASE, postings_per_term=500)),
    ("hybrid fewer postings for common lexemes", "hybrid", replace(BASE, postings_by_idf=True)),
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
                answered = await off_topic_answered(db, embedder, settings, mode, tuning)
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
