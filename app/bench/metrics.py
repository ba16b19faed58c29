"""Ranking metrics of BEIR: nDCG@k (graded, log2 discount), recall@k, MRR@k."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    gains = [relevant.get(doc, 0) for doc in ranked[:k]]
    dcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    wanted = {doc for doc, gain in relevant.items() if gain > 0}
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def mrr_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    for i, doc in enumerate(ranked[:k]):
        if relevant.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def summarise(
    rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    """Mean metrics over the queries that have judgments."""
    queries = [q for q in qrels if q in rankings]
    if not queries:
        return {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4)

    return {
        "ndcg@10": mean([ndcg_at(rankings[q], qrels[q], 10) for q in queries]),
        "recall@10": mean([recall_at(rankings[q], qrels[q], 10) for q in queries]),
        "recall@100": mean([recall_at(rankings[q], qrels[q], 100) for q in queries]),
        "mrr@10": mean([mrr_at(rankings[q], qrels[q], 10) for q in queries]),
    }
