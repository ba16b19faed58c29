"""The bundled code-documentation collection: `corpus eval --data codedocs` finds it by name, and
every judgment is a section that holds its query's identifier as written."""

from __future__ import annotations

from pathlib import Path

from app.bench.evaluation import BUNDLED, by_kind, load_dataset


def test_the_collection_loads_by_name_and_its_judgments_hold_their_identifier() -> None:
    dataset = load_dataset(BUNDLED[str(Path("codedocs"))])
    texts = {doc["_id"]: doc["text"] for doc in dataset.corpus}

    assert len(dataset.queries) > 500
    for query_id, query in dataset.queries.items():
        if query_id.startswith("exact-"):
            for doc_id in dataset.qrels[query_id]:
                assert query in texts[doc_id], (query_id, doc_id)
    assert {key.split("-")[0] for key in dataset.queries} == {"exact", "words", "question"}


def test_figures_by_kind_only_where_every_id_names_one() -> None:
    qrels = {"exact-1": {"a": 1}, "words-2": {"a": 1}}
    rankings = {"exact-1": ["a"], "words-2": ["b"]}

    kinds = by_kind(rankings, qrels)

    assert kinds["kind:exact"]["ndcg@10"] == 1.0
    assert kinds["kind:words"]["ndcg@10"] == 0.0
    assert by_kind(rankings, qrels | {"17": {"a": 1}}) == {}
