"""Dump each query's two halves (dense similarity, BM25 score and idf coverage, top 200 each) on
a collection ingested through the product, so that fusion functions can be compared offline on
the same candidates (scripts/fuse_offline.py).

    CORPUS_DATA_DIR=var/eval .venv/bin/python scripts/dump_halves.py --data codedocs --out x.json

Settings come from the environment as for `corpus` (embeddings cached as `corpus eval` caches
them). The BM25 score is the keyword half's own (`queries._KEYWORD`), read with one more column.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path

from sqlalchemy import text

from app.bench.cache import CachingEmbedder
from app.bench.evaluation import (
    BUNDLED,
    QUERY_CHARS,
    ingest_corpus,
    load_dataset,
    prepare_embeddings,
    throwaway_database,
)
from app.bench.queries import vacuum_analyze
from app.config import get_settings
from app.db import embedded
from app.rag import queries, retrieval
from app.rag.embeddings import make_embedder

DEPTH = 200
_KEYWORD_SCORES = (
    "WITH "
    + queries._KEYWORD
    + "\nSELECT chunk_id AS id, bm25, coverage FROM keyword_scores ORDER BY bm25 DESC, chunk_id "
    + "LIMIT :keyword_depth"
)


def progress(stage: str, done: int, total: int) -> None:
    print(f"\r{stage}: {done}/{total}", end="", file=sys.stderr, flush=True)


async def main(folder: Path, out: Path) -> None:
    settings = get_settings()
    dataset = load_dataset(BUNDLED.get(str(folder), folder))
    embedder = CachingEmbedder(
        make_embedder(settings), settings.data_dir / "cache" / "embeddings.sqlite"
    )
    tuning = replace(retrieval.DEFAULT_TUNING, dense_depth=DEPTH, keyword_depth=DEPTH)
    try:
        await prepare_embeddings(embedder, dataset.corpus, progress)
        async with throwaway_database(settings, "corpus_dump") as db:
            ids = await ingest_corpus(db, embedder, settings, dataset.corpus, progress)
            await vacuum_analyze(db.write_engine)
            async with db.read() as conn:
                rows = (await conn.execute(text("SELECT id, document_id FROM chunks"))).all()
            chunk_doc = {str(r.id): ids[str(r.document_id)] for r in rows}
            dumped = []
            for n, (query_id, query) in enumerate(dataset.queries.items(), 1):
                query = query[:QUERY_CHARS]
                vector = await embedder.embed_query(query)
                entry: dict[str, object] = {"id": query_id, "query": query}
                for mode in ("hybrid", "keyword"):
                    params = retrieval.search_params(
                        query,
                        vector,
                        settings,
                        mode=mode,
                        caller_id=None,
                        workspace_ids=None,
                        tags=None,
                        limit=10,
                        tuning=tuning,
                    )
                    async with db.read() as conn:
                        await queries.size_vector_search(conn, DEPTH)
                        if mode == "hybrid":
                            dense = await queries.dense_half(conn, params)
                            entry["dense"] = [
                                [str(i), chunk_doc[str(i)], s]
                                for i, s in zip(dense.ids, dense.scores, strict=True)
                            ]
                            entry["identifier"] = params.dense_weight != tuning.dense_share
                        values = queries._values(params)
                        found = (await conn.execute(queries._clause(_KEYWORD_SCORES), values)).all()
                        entry[f"{mode}_bm25"] = [
                            [str(r.id), chunk_doc[str(r.id)], float(r.bm25), float(r.coverage)]
                            for r in found
                        ]
                dumped.append(entry)
                if n % 50 == 0:
                    progress("dump", n, len(dataset.queries))
            out.write_text(json.dumps({"qrels": dataset.qrels, "queries": dumped}))
    finally:
        await embedder.aclose()
        if not settings.database_url:
            embedded.release(settings.data_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    asyncio.run(main(args.data, args.out))
