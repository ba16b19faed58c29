"""The search statement's plan, run (EXPLAIN ANALYZE, BUFFERS), on a corpus `corpus bench
--keep` loaded: the queries the bench measures, the slowest of them by mode.

    CORPUS_DATA_DIR=/path corpus bench --sizes 100000 --keep   # once
    CORPUS_DATA_DIR=/path .venv/bin/python scripts/explain_search.py --size 100000 --kind natural

Prints, for each mode, the p50/p95 of the statement alone over the bench's queries (in process,
no query embedding: the hash vectors the corpus was made with) and the plan of the query at the
95th percentile.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import get_args

from app.bench import queries as bench_queries
from app.bench.load import KEPT_DATABASE, NATURAL_QUERY_WORDS, QUERIES, Zipf
from app.config import get_settings
from app.db import embedded, scratch
from app.db.engine import Database
from app.rag import queries, retrieval
from app.rag.embeddings.hash import HashEmbedder
from app.rag.schemas import SearchMode


async def main(size: int, kind: str, repeats: int) -> None:
    settings = get_settings().model_copy(update={"retrieval_min_similarity": 0.0})
    corpus = Zipf(seed=7)
    short = [corpus.query() for _ in range(QUERIES)]
    natural = [corpus.query(NATURAL_QUERY_WORDS) for _ in range(QUERIES)]
    texts = short if kind == "short" else natural
    hasher = HashEmbedder()
    vectors = await hasher.embed_passages(texts)
    with embedded.attached(settings) as server:
        db = Database(scratch.database_url(server, KEPT_DATABASE.format(size=size)))
        try:
            async with db.read() as conn:
                ef_search = await bench_queries.product_ef_search(conn)
            bare: list[float] = []
            for _ in range(repeats):
                for vector in vectors:
                    async with db.read() as conn:
                        started = time.perf_counter()
                        await bench_queries.nearest(conn, vector, 10, ef_search=ef_search)
                        bare.append((time.perf_counter() - started) * 1000)
            bare.sort()
            print(
                f"== bare pgvector ({kind}): p50 {statistics.median(bare):.2f} ms, "
                f"p95 {bare[int(0.95 * (len(bare) - 1))]:.2f} ms"
            )
            for mode in get_args(SearchMode):
                timed: list[tuple[float, int]] = []
                for _ in range(repeats):
                    for i, text in enumerate(texts):
                        params = retrieval.search_params(
                            text,
                            vectors[i] if mode != "keyword" else None,
                            settings,
                            mode=mode,
                            caller_id=None,
                            workspace_ids=None,
                            tags=None,
                            limit=10,
                        )
                        async with db.read() as conn:
                            started = time.perf_counter()
                            await queries.search(conn, params)
                            timed.append(((time.perf_counter() - started) * 1000, i))
                timed.sort()
                samples = [ms for ms, _ in timed]
                p95_ms, p95_query = timed[int(0.95 * (len(timed) - 1))]
                print(
                    f"== {mode} ({kind}, {size:,} chunks): p50 "
                    f"{statistics.median(samples):.2f} ms, p95 {p95_ms:.2f} ms; "
                    f"the p95 query: {texts[p95_query]!r}"
                )
                params = retrieval.search_params(
                    texts[p95_query],
                    vectors[p95_query] if mode != "keyword" else None,
                    settings,
                    mode=mode,
                    caller_id=None,
                    workspace_ids=None,
                    tags=None,
                    limit=10,
                )
                async with db.read() as conn:
                    print(await queries.explain(conn, params, analyze=True))
        finally:
            await db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--kind", choices=["short", "natural"], default="natural")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(main(args.size, args.kind, args.repeats))
