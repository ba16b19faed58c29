"""Compare fusion functions offline, over the halves `scripts/dump_halves.py` dumped: each
query's dense and keyword candidates as the product read them, fused here in Python the way
`app.rag.queries` fuses them in SQL, and scored as `corpus eval` scores (a document ranks by its
best chunk, 300 chunks deep; nDCG@10 and recall@100 by `app.bench.metrics.summarise`).

    .venv/bin/python scripts/fuse_offline.py var/dumps/scifact.json var/dumps/cisi.json \\
        var/dumps/codedocs.json [--only NAME ...]

Prints, for each fusion in `FUSIONS`, nDCG@10 (recall@100) on each dump. A replica, not the
product: equal scores break by chunk id here and by the document's age there, so a collection of
near-copies may differ in the fourth decimal; the kept fusion read the same figures as
`corpus eval` on SciFact, CISI and codedocs (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.bench.metrics import summarise
from app.config import PROVIDER_DEFAULTS
from app.rag.retrieval import DEFAULT_TUNING

# `corpus eval`'s depth: its top 100 documents from 300 chunks.
CHUNKS = 300
DOCUMENTS = 100
# The local model's relevance floor, which the dumps were read with.
FLOOR = PROVIDER_DEFAULTS["local"][2]


@dataclass(frozen=True, slots=True)
class Dense:
    chunk: str
    doc: str
    similarity: float


@dataclass(frozen=True, slots=True)
class Keyword:
    chunk: str
    doc: str
    bm25: float
    coverage: float


@dataclass(frozen=True, slots=True)
class Term:
    lexeme: str
    idf: float
    weight: float  # BM25's numerator for it: idf × (k1 + 1) (× repeats in a passage)
    covers: bool  # one of the query's words (not an identifier's written form)


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    identifier: bool  # names an identifier (`identifiers.lexable`)
    dense: list[Dense]  # best first, above the similarity floor
    keyword: list[Keyword]  # best first (BM25, then chunk id)
    terms: list[Term]
    # Each half's score for the other's candidates (dumps since they were added): a keyword
    # candidate's similarity, a dense candidate's BM25 (absent: it holds no query lexeme).
    keyword_similarity: dict[str, float]
    dense_bm25: dict[str, float]


# A ranking: (chunk, document, score, similarity or None), best first.
Ranked = list[tuple[str, str, float, float | None]]
Fusion = Callable[[Query], Ranked]


def load(path: Path) -> tuple[list[Query], dict[str, dict[str, int]]]:
    dump = json.loads(path.read_text())
    found: list[Query] = []
    for entry in dump["queries"]:
        found.append(
            Query(
                id=entry["id"],
                text=entry["query"],
                identifier=bool(entry["identifier"]),
                dense=[Dense(c, d, float(s)) for c, d, s in entry["dense"]],
                keyword=[Keyword(c, d, float(b), float(v)) for c, d, b, v in entry["keyword_bm25"]],
                terms=[Term(lx, float(i), float(w), bool(c)) for lx, i, w, c in entry["terms"]],
                keyword_similarity=entry.get("keyword_similarity", {}),
                dense_bm25=entry.get("dense_bm25", {}),
            )
        )
    return found, dump["qrels"]


def ordered(scored: Ranked) -> Ranked:
    """The product's order: fused score, then the similarity (a vector match first), then id."""
    return sorted(scored, key=lambda h: (-h[2], -(h[3] if h[3] is not None else -math.inf), h[0]))


def dense_mode(query: Query) -> Ranked:
    return [(h.chunk, h.doc, h.similarity, h.similarity) for h in query.dense]


def keyword_mode(query: Query) -> Ranked:
    floor = DEFAULT_TUNING.keyword_min_coverage
    kept = [h for h in query.keyword if h.coverage >= floor]
    return [(h.chunk, h.doc, 1 / (i + 1), None) for i, h in enumerate(kept)]


# --- scalings of each half's scores, over its candidates -------------------------------------


def minmax(values: Sequence[float]) -> list[float]:
    if not values:
        return []
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in values]


def share_of_best(values: Sequence[float]) -> list[float]:
    hi = max(values, default=0.0)
    return [v / hi if hi > 0 else 0.0 for v in values]


def fused(
    query: Query,
    dense_share: float,
    dense_scaled: Sequence[float] | None = None,
    keyword_scaled: Sequence[float] | None = None,
) -> Ranked:
    """A weighed sum of the scaled halves (by default the product's scalings), a candidate
    missing from a half scoring 0 there; a keyword-only candidate must pass the coverage floor."""
    if dense_scaled is None:
        dense_scaled = minmax([h.similarity for h in query.dense])
    if keyword_scaled is None:
        keyword_scaled = share_of_best([h.bm25 for h in query.keyword])
    scores: dict[str, list[float]] = {}
    docs: dict[str, str] = {}
    similarity: dict[str, float] = {}
    for h, s in zip(query.dense, dense_scaled, strict=True):
        scores[h.chunk] = [s, 0.0]
        docs[h.chunk] = h.doc
        similarity[h.chunk] = h.similarity
    floor = DEFAULT_TUNING.min_coverage
    for k, s in zip(query.keyword, keyword_scaled, strict=True):
        if k.chunk in scores:
            scores[k.chunk][1] = s
        elif k.coverage >= floor:
            scores[k.chunk] = [0.0, s]
            docs[k.chunk] = k.doc
    return ordered(
        [
            (c, docs[c], dense_share * d + (1 - dense_share) * k, similarity.get(c))
            for c, (d, k) in scores.items()
        ]
    )


def product(query: Query) -> Ranked:
    """ADR 0033 as first decided: min-max / share of the best, the dense half weighing 0.35
    (0.175 for a query that names an identifier)."""
    return fused(query, 0.175 if query.identifier else 0.35)


def rrf(query: Query, k: int = 60) -> Ranked:
    scores: dict[str, float] = {}
    docs: dict[str, str] = {}
    similarity: dict[str, float] = {}
    for i, h in enumerate(query.dense, 1):
        scores[h.chunk] = 1 / (k + i)
        docs[h.chunk] = h.doc
        similarity[h.chunk] = h.similarity
    for i, kh in enumerate(query.keyword, 1):
        if kh.chunk in scores:
            scores[kh.chunk] += 1 / (k + i)
        elif kh.coverage >= DEFAULT_TUNING.min_coverage:
            scores[kh.chunk] = 1 / (k + i)
            docs[kh.chunk] = kh.doc
    return ordered([(c, docs[c], s, similarity.get(c)) for c, s in scores.items()])


# --- each half's confidence for the query ------------------------------------------------------


def dense_confidence(query: Query, floor: float = FLOOR) -> float:
    """How far the dense half's best stands above the relevance floor, as a share of the most
    it could (similarity 1)."""
    if not query.dense:
        return 0.0
    return max(0.0, (query.dense[0].similarity - floor) / (1 - floor))


def keyword_confidence(query: Query) -> float:
    """How much of the query the keyword half's best matches: its BM25 as a share of the
    query's attainable BM25 (every lexeme's numerator, as if each were said without end)."""
    attainable = sum(t.weight for t in query.terms)
    if not query.keyword or attainable <= 0:
        return 0.0
    return min(1.0, query.keyword[0].bm25 / attainable)


def named(query: Query, share: float) -> float:
    return share * DEFAULT_TUNING.named_dense_factor if query.identifier else share


def confident(query: Query) -> Ranked:
    """The kept rule (`retrieval.Tuning`, ADR 0033): the dense half weighs as much as it is
    sure of its best and as much of the query as the keyword half's best leaves unmatched."""
    return fused(query, named(query, dense_confidence(query) * (1 - keyword_confidence(query))))


def fixed(share: float) -> Fusion:
    return lambda query: fused(query, named(query, share))


def by_dense_confidence(scale: float) -> Fusion:
    return lambda query: fused(query, named(query, min(1.0, scale * dense_confidence(query))))


def by_keyword_confidence(scale: float) -> Fusion:
    return lambda query: fused(query, named(query, scale * (1 - keyword_confidence(query))))


def relative(base: float) -> Fusion:
    """Each half weighed by its confidence, the dense half's prior share `base`."""

    def fusion(query: Query) -> Ranked:
        d, k = base * dense_confidence(query), (1 - base) * keyword_confidence(query)
        return fused(query, named(query, d / (d + k) if d + k > 0 else base))

    return fusion


def peaked(base: float, depth: int = 10) -> Fusion:
    """Each half weighed by how far its depth-th candidate falls below its best, on its scale."""

    def fusion(query: Query) -> Ranked:
        dense = minmax([h.similarity for h in query.dense])
        keyword = share_of_best([h.bm25 for h in query.keyword])
        d = base * (1 - dense[min(depth, len(dense)) - 1]) if dense else 0.0
        k = (1 - base) * (1 - keyword[min(depth, len(keyword)) - 1]) if keyword else 0.0
        return fused(query, named(query, d / (d + k) if d + k > 0 else base), dense, keyword)

    return fusion


def spanned(span: float) -> Fusion:
    """The kept weights, the similarity scaled by a fixed span below the best (not min-max)."""

    def fusion(query: Query) -> Ranked:
        best = query.dense[0].similarity if query.dense else 0.0
        dense = [max(0.0, 1 - (best - h.similarity) / span) for h in query.dense]
        share = dense_confidence(query) * (1 - keyword_confidence(query))
        return fused(query, named(query, share), dense)

    return fusion


def whole(query: Query) -> Ranked:
    """The kept weights, each candidate scored by both halves: a dense candidate's BM25 read
    for it rather than 0 (dumps with `dense_bm25`)."""
    keyword = {h.chunk: h.bm25 for h in query.keyword}
    best = max(keyword.values(), default=0.0)
    extra = [
        Keyword(h.chunk, h.doc, query.dense_bm25[h.chunk], 1.0)
        for h in query.dense
        if h.chunk not in keyword and h.chunk in query.dense_bm25
    ]
    widened = replace(query, keyword=query.keyword + extra)
    scaled = [h.bm25 / best if best > 0 else 0.0 for h in widened.keyword]
    share = dense_confidence(query) * (1 - keyword_confidence(query))
    return fused(widened, named(query, share), keyword_scaled=scaled)


def bounded(query: Query) -> Ranked:
    """The kept weights, a dense-only candidate given the keyword list's last score (the most
    its BM25 can be when the list is full) rather than 0."""
    keyword = share_of_best([h.bm25 for h in query.keyword])
    last = keyword[-1] if len(keyword) >= CHUNKS else 0.0
    listed = {h.chunk for h in query.keyword}
    extra = [Keyword(h.chunk, h.doc, 0.0, 1.0) for h in query.dense if h.chunk not in listed]
    widened = replace(query, keyword=query.keyword + extra)
    share = dense_confidence(query) * (1 - keyword_confidence(query))
    return fused(widened, named(query, share), keyword_scaled=keyword + [last] * len(extra))


FUSIONS: dict[str, Fusion] = {
    "dense": dense_mode,
    "keyword": keyword_mode,
    "rrf k60": rrf,
    "ADR 0033: share 0.35 (0.175 named)": product,
    **{f"fixed share {s}": fixed(s) for s in (0.02, 0.1, 0.2, 0.3, 0.4, 0.5)},
    **{f"share {c} x dense confidence": by_dense_confidence(c) for c in (0.6, 0.8, 1.0)},
    **{f"share {c} x (1 - keyword confidence)": by_keyword_confidence(c) for c in (0.4, 0.6)},
    **{f"relative confidences, base {b}": relative(b) for b in (0.35, 0.5)},
    **{f"peakedness at 10, base {b}": peaked(b) for b in (0.35, 0.5)},
    "kept: dense confidence x (1 - keyword confidence)": confident,
    **{f"kept, similarity over a span of {s}": spanned(s) for s in (0.2, 0.3)},
    "kept, every candidate scored by both halves": whole,
    "kept, a dense-only candidate at the keyword list's last score": bounded,
    "kept, identifiers not weighed apart": lambda query: fused(
        query, dense_confidence(query) * (1 - keyword_confidence(query))
    ),
}


def rankings(queries: Sequence[Query], fusion: Fusion) -> dict[str, list[str]]:
    ranked: dict[str, list[str]] = {}
    for query in queries:
        docs = dict.fromkeys(doc for _, doc, _, _ in fusion(query)[:CHUNKS])
        ranked[query.id] = list(docs)[:DOCUMENTS]
    return ranked


def score(
    queries: Sequence[Query], qrels: dict[str, dict[str, int]], fusion: Fusion
) -> dict[str, float]:
    return summarise(rankings(queries, fusion), qrels)


def main(paths: list[Path], only: list[str]) -> None:
    dumps = {path.stem: load(path) for path in paths}
    names = [name for name in FUSIONS if not only or any(o in name for o in only)]
    width = max(len(name) for name in names)
    print(" " * width, *(f"{stem:>18}" for stem in dumps))
    for name in names:
        cells = []
        for queries, qrels in dumps.values():
            metrics = score(queries, qrels, FUSIONS[name])
            cells.append(f"{metrics['ndcg@10']:.4f} ({metrics['recall@100']:.4f})")
        print(f"{name:<{width}}", *(f"{cell:>18}" for cell in cells))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dumps", nargs="+", type=Path)
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    main(args.dumps, args.only)
