"""Dump each query's two halves on a collection ingested through the product, so that fusion
functions can be compared offline on the same candidates (scripts/fuse_offline.py): the dense
half's top 300 (similarity) and the keyword half's (BM25 and idf coverage), as `corpus eval`
reads them; the query's lexemes as the keyword half weighs them; and each half's score for the
other half's candidates.

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

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID

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

# The evaluation's depth: `corpus eval` ranks documents from 300 chunks (its top 100 × 3), so
# each half reads 300 candidates there, and the dense half's min-max runs over them.
DEPTH = 300
_KEYWORD_SCORES = (
    "WITH "
    + queries._KEYWORD
    + "\nSELECT chunk_id AS id, bm25, coverage FROM keyword_scores ORDER BY bm25 DESC, chunk_id "
    + "LIMIT :keyword_depth"
)
# The query's lexemes as the keyword half weighs them (idf, BM25's numerator, and whether it
# counts towards coverage), for fusions that judge how much of the query a hit matches.
# Each half's score for the other half's candidates (a candidate missing from a half's top list
# still has a similarity, and a BM25 score, possibly 0), for fusions that score the union whole.
_SIMILARITY = (
    "SELECT id, 1 - (embedding <=> CAST(:embedding AS vector)) AS similarity FROM chunks "
    "WHERE id = ANY(CAST(:ids AS uuid[]))"
)
_BM25_OF = (
    "WITH "
    + queries._KEYWORD
    + "\nSELECT x.chunk_id AS id,"
    + " sum(t.weight * x.tf / (x.tf + norm.base + norm.per_lexeme * x.dl)) AS bm25"
    + " FROM terms t CROSS JOIN norm JOIN chunk_terms x ON x.lexeme = t.lexeme"
    + " WHERE x.chunk_id = ANY(CAST(:ids AS uuid[])) GROUP BY x.chunk_id"
)
_TERMS = (
    "WITH " + queries._KEYWORD + "\nSELECT lexeme, idf, weight, covers FROM terms ORDER BY lexeme"
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
                            dense_ids = dense.ids
                            entry["dense"] = [
                                [str(i), chunk_doc[str(i)], s]
                                for i, s in zip(dense.ids, dense.scores, strict=True)
                            ]
                            entry["identifier"] = params.dense_factor != 1.0
                        values = queries._values(params)
                        if mode == "keyword":
                            terms = (await conn.execute(queries._clause(_TERMS), values)).all()
                            entry["terms"] = [
                                [r.lexeme, float(r.idf), float(r.weight), bool(r.covers)]
                                for r in terms
                            ]
                        found = (await conn.execute(queries._clause(_KEYWORD_SCORES), values)).all()
                        keyword_ids = [r.id for r in found]
                        entry[f"{mode}_bm25"] = [
                            [str(r.id), chunk_doc[str(r.id)], float(r.bm25), float(r.coverage)]
                            for r in found
                        ]
                async with db.read() as conn:
                    sims = await conn.execute(
                        text(_SIMILARITY).bindparams(
                            bindparam("embedding", type_=Vector()),
                            bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True))),
                        ),
                        {"embedding": vector, "ids": keyword_ids},
                    )
                    entry["keyword_similarity"] = {str(r.id): float(r.similarity) for r in sims}
                    values = queries._values(params) | {"ids": dense_ids}
                    clause = queries._clause(_BM25_OF).bindparams(
                        bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))
                    )
                    bm25 = await conn.execute(clause, values)
                    entry["dense_bm25"] = {str(r.id): float(r.bm25) for r in bm25}
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
