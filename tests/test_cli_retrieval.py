"""`corpus ingest`, `corpus eval` and `corpus bench`, run for real against the session's
embedded PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.bench import doors
from app.bench.load import HELD_OUT_SEED, Zipf, bench
from app.config import Settings
from app.db import embedded, scratch
from tests.support import PROJECT_ROOT, child_env, make_settings, run_corpus_here


def _corpus(args: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = child_env(CORPUS_DATA_DIR=str(data_dir), EMBEDDINGS_PROVIDER="hash")
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


async def _rows(server_url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_async_engine(server_url)
    async with engine.connect() as conn:
        rows = [tuple(row) for row in await conn.execute(text(sql))]
    await engine.dispose()
    return rows


_DEPLOY_LINKS = (
    "SELECT l.target_path = ltrim(p.source, '/') FROM document_links l "
    "JOIN documents d ON d.id = l.document_id "
    "JOIN documents p ON p.title = 'Page' AND p.workspace_id = d.workspace_id "
    "WHERE d.title = 'Deploy' AND l.href = 'sub/page.html'"
)


def test_ingest_walks_a_folder_skips_unchanged_files_and_updates_changed_ones(
    tmp_path: Path, data_dir: Path, server_url: str
) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "deploy.md").write_text("# Deploy\n\nShip it: [page](sub/page.html).\n")
    (docs / "notes.txt").write_text("Plain notes about the on-call rotation.\n")
    (docs / "sub" / "page.html").write_text("<h1>Page</h1><p>HTML about caching.</p>")
    (docs / ".hidden" / "skip.md").write_text("# Hidden\n")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")

    first = _corpus(["ingest", str(docs), "--workspace", "handbook", "--tags", "ops"], data_dir)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().splitlines()[-1].startswith("3 files: 3 added, 0 updated")
    # The walk creates a missing workspace as an admin would, and says so (once).
    assert "created workspace 'handbook'" in first.stderr
    # Its relative link names the page by the walk's (absolute) source of it.
    assert asyncio.run(_rows(server_url, _DEPLOY_LINKS)) == [(True,)]

    again = _corpus(["ingest", str(docs), "--workspace", "handbook"], data_dir)
    assert "0 added, 0 updated, 3 unchanged" in again.stdout
    assert "created workspace" not in again.stderr

    (docs / "deploy.md").write_text("# Deploy\n\nShip it with make release, then [watch](#).\n")
    changed = _corpus(["ingest", str(docs), "--workspace", "handbook"], data_dir)
    assert "0 added, 1 updated, 2 unchanged" in changed.stdout

    rows = asyncio.run(
        _rows(
            server_url,
            "SELECT d.title, d.owner_id, d.visibility, d.version, d.tags FROM documents d "
            "JOIN workspaces w ON w.id = d.workspace_id WHERE w.slug = 'handbook' ORDER BY 1",
        )
    )
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("Deploy", None, "org", 2),
        ("Page", None, "org", 1),
        ("notes", None, "org", 1),
    ]
    # The second version of the deploy notes links to nothing.
    assert asyncio.run(_rows(server_url, _DEPLOY_LINKS)) == []


def test_ingest_exits_non_zero_when_a_file_fails(tmp_path: Path, data_dir: Path) -> None:
    bad = tmp_path / "logo.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n")
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nA readable file.\n")
    result = _corpus(["ingest", str(bad), str(good)], data_dir)
    assert result.returncode == 1
    assert "1 failed" in result.stdout
    assert "logo.png" in result.stderr


@pytest.mark.parametrize(
    "args",
    [["ingest", "x", "--workspace", "Bad Slug"], ["ingest", "x", "--visibility", "private"]],
)
def test_ingest_refuses_bad_arguments(args: list[str], settings: Settings) -> None:
    assert run_corpus_here(args, settings.database_url).returncode == 2


def _beir(folder: Path) -> None:
    topics = {
        "d1": ("Rollback procedure", "Run make rollback to return to the previous release."),
        "d2": ("Cache warming", "Warm the cache before traffic arrives by replaying logs."),
        "d3": ("Database failover", "Promote the replica when the primary stops answering."),
        "d4": ("Tomato sauce", "Simmer tomatoes with garlic and basil for an hour."),
        "d5": ("Invoice schedule", "Invoices go out on the first business day of the month."),
    }
    folder.mkdir()
    with (folder / "corpus.jsonl").open("w") as out:
        for doc_id, (title, body) in topics.items():
            out.write(json.dumps({"_id": doc_id, "title": title, "text": body}) + "\n")
    queries = {
        "q1": "how do I rollback to the previous release",
        "q2": "promote the replica when the primary fails",
        "q3": "when do invoices go out",
        "q4": "unjudged question",
    }
    with (folder / "queries.jsonl").open("w") as out:
        for query_id, query in queries.items():
            out.write(json.dumps({"_id": query_id, "text": query}) + "\n")
    (folder / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td5\t1\n"
    )


def test_eval_reports_every_mode_from_a_throwaway_database(
    tmp_path: Path, data_dir: Path, server_url: str
) -> None:
    _beir(tmp_path / "tiny")
    result = _corpus(["eval", "--data", str(tmp_path / "tiny"), "--json"], data_dir)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["dataset"], report["docs"], report["queries"]) == ("tiny", 5, 3)
    assert report["provider"] == "hash"
    assert set(report["modes"]) == {"dense", "keyword", "hybrid"}
    for metrics in report["modes"].values():
        assert set(metrics) == {
            "ndcg@10",
            "recall@10",
            "recall@100",
            "mrr@10",
            "off_topic_answered",
        }
        assert 0 <= metrics["off_topic_answered"] <= report["off_topic"] == 30
    assert report["modes"]["keyword"]["mrr@10"] == 1.0
    assert report["modes"]["hybrid"]["recall@10"] == 1.0
    leftovers = asyncio.run(
        _rows(server_url, "SELECT datname FROM pg_database WHERE datname LIKE 'corpus_eval_%'")
    )
    assert leftovers == []


def test_eval_refuses_a_folder_that_is_not_beir(tmp_path: Path, settings: Settings) -> None:
    result = run_corpus_here(["eval", "--data", str(tmp_path), "--json"], settings.database_url)
    assert result.returncode == 2
    assert "not a BEIR folder" in result.stderr


async def test_bench_measures_latency_recall_and_ingest_on_a_small_corpus(
    settings: Settings, tmp_path: Path
) -> None:
    _beir(tmp_path / "tiny")
    stages: list[str] = []
    report = await bench(
        make_settings(settings.data_dir, database_url=settings.database_url),
        [600],
        lambda stage, done, total: stages.append(stage),
        query_count=20,
        ingest_documents=5,
        model_ingest_documents=3,
        collection=tmp_path / "tiny",
    )
    row = report["sizes"]["600"]
    # Test servers keep initdb's settings: no autoprewarm, nothing to wait for beyond the two
    # looks half a second apart.
    assert report["prewarm_wait_s"] < 2
    assert report["ingest"]["documents"] == 5
    assert report["ingest"]["chunks"] >= 5
    assert report["ingest"]["chunks_per_s"] > 0
    # The configured model's ingest, on the collection's first documents.
    with_model = report["ingest_with_model"]
    assert (with_model["provider"], with_model["text"]) == (report["provider_for_queries"], "tiny")
    assert with_model["documents"] == 3
    assert with_model["chunks"] >= 3
    assert with_model["chunks_per_s"] > 0
    # ... through `corpus ingest`, beside the model alone on the very same chunks.
    assert with_model["model_alone_chunks"] == with_model["chunks"]
    assert with_model["failed"] == 0
    assert with_model["model_alone_chunks_per_s"] > 0
    # The model alone before each part of the walk and after the last, between them the walk.
    parts = with_model["parts"]
    assert len(parts["model_alone_chunks_per_s"]) == len(parts["ingest_chunks_per_s"]) + 1
    assert len(parts["model_alone_one_call_chunks_per_s"]) == len(parts["model_alone_chunks_per_s"])
    assert (
        min(
            parts["model_alone_chunks_per_s"]
            + parts["model_alone_one_call_chunks_per_s"]
            + parts["ingest_chunks_per_s"]
        )
        > 0
    )
    # The product's rate over the model's (the hash embedder's "model" is all but free here).
    share = with_model["chunks_per_s"] / with_model["model_alone_chunks_per_s"]
    assert with_model["share_of_model_rate"] == pytest.approx(share, abs=0.01)
    one_call = with_model["chunks_per_s"] / with_model["model_alone_one_call_chunks_per_s"]
    assert with_model["share_of_one_call_rate"] == pytest.approx(one_call, abs=0.01)
    for clients in ("one_client", "8_clients"):
        embedding = report["query_embedding"][clients]
        assert 0 < embedding["p50"] <= embedding["p95"]
    # The collection's own text, searched with its own (judged) queries.
    collection = report["collection"]
    assert (collection["name"], collection["documents"], collection["queries"]) == ("tiny", 5, 3)
    assert collection["chunks"] >= 5
    for latency in [collection[mode] for mode in ("dense", "keyword", "hybrid")] + [
        collection["bare_pgvector"]
    ]:
        assert 0 < latency["one_client"]["p50"] <= latency["one_client"]["p95"]
        assert latency["8_clients"]["p50"] > 0
    assert set(collection["ratios"]) == {
        "hybrid_over_dense_p95",
        "dense_over_bare_p95",
        "hybrid_over_bare_p95",
    }
    for mode in ("dense", "keyword", "hybrid"):
        for clients in ("one_client", "8_clients"):
            latency = row[mode][clients]
            assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"]
    assert set(row["dense"]) == {
        "one_client",
        "8_clients",
        "one_client_with_embedding",
        "8_clients_with_embedding",
    }
    assert "one_client_with_embedding" not in row["keyword"]
    for mode in ("dense", "keyword", "hybrid"):
        assert row["natural"][mode]["8_clients"]["p50"] > 0
    for kind in ("short", "natural"):
        assert row["bare_pgvector"][kind]["one_client"]["p95"] > 0
        assert set(row["ratios"][kind]) == {
            "hybrid_over_dense_p95",
            "dense_over_bare_p95",
            "hybrid_over_bare_p95",
        }
    assert row["hnsw_recall@10"]["ef_search=100"] >= 0.9
    assert "load 600" in stages


def test_bench_refuses_a_folder_that_is_not_beir_before_measuring_anything(
    tmp_path: Path, settings: Settings, server_url: str
) -> None:
    before = asyncio.run(_rows(server_url, "SELECT datname FROM pg_database ORDER BY 1"))
    result = run_corpus_here(
        ["bench", "--sizes", "100", "--data", str(tmp_path), "--json"], settings.database_url
    )
    assert result.returncode == 2
    assert "not a BEIR folder" in result.stderr
    assert result.stdout == ""
    assert asyncio.run(_rows(server_url, "SELECT datname FROM pg_database ORDER BY 1")) == before


def test_held_out_passages_are_the_same_whatever_the_corpus_drew_and_none_of_its_chunks() -> None:
    # A kept corpus skips its load, so the corpus's own stream is elsewhere than after a load;
    # the held-out passages must not follow it (they were once the kept corpus's first chunks).
    loaded, kept = Zipf(seed=7), Zipf(seed=7)
    chunks = {loaded.passage() for _ in range(300)}
    after_load = loaded.stream(HELD_OUT_SEED)
    without_load = kept.stream(HELD_OUT_SEED)
    held_out = [after_load.passage() for _ in range(50)]
    assert held_out == [without_load.passage() for _ in range(50)]
    assert not chunks & set(held_out)
    assert kept.passage() in chunks  # the corpus's own stream is untouched by the other


async def test_a_kept_bench_corpus_is_measured_again_without_loading(settings: Settings) -> None:
    bench_settings = make_settings(settings.data_dir, database_url=settings.database_url)
    kept = "corpus_bench_kept_300"
    try:
        runs = []
        for _ in range(2):
            stages: list[str] = []

            def progress(stage: str, _done: int, _total: int, seen: list[str] = stages) -> None:
                seen.append(stage)

            report = await bench(
                bench_settings,
                [300],
                progress,
                query_count=5,
                ingest_documents=1,
                keep=True,
            )
            runs.append((report["sizes"]["300"], stages))
        (first, first_stages), (second, second_stages) = runs
        assert first["reused"] is False
        assert "load 300" in first_stages
        assert second["reused"] is True
        assert "load 300" not in second_stages
        assert second["load_seconds"] == first["load_seconds"]
        kept_url = scratch.database_url(settings.database_url, kept)
        assert await _rows(kept_url, "SELECT count(*) FROM chunks") == [(300,)]
    finally:
        await scratch.drop_database(settings.database_url, kept)


async def test_bench_measures_what_each_door_adds_to_a_search(settings: Settings) -> None:
    report = await doors.measure(
        make_settings(settings.data_dir, database_url=settings.database_url),
        documents=5,
        queries=20,
        rate_queries=40,
        postgres_pid=embedded.server_pid(settings.data_dir),
    )
    latency = report["latency_ms"]
    # Every door answered every query (a refused or failed call raises), and was timed.
    assert set(latency) == {
        "service, in process",
        "POST /api/search",
        "MCP search_docs (JSON-RPC POST)",
        "GET /api/me",
        "MCP whoami (JSON-RPC POST)",
    }
    for row in latency.values():
        assert 0 < row["p50"] <= row["p95"] <= row["p99"]
    in_process = latency["service, in process"]["p50"]
    for door, cost in report["door_over_in_process_p50_ms"].items():
        assert cost == pytest.approx(latency[door]["p50"] - in_process, abs=0.01)
    eight = report["8_clients"]
    assert eight["queries"] == 40
    assert eight["in_process_per_s"] > 0
    assert eight["http_per_s"] > 0
    assert eight["http_over_in_process"] == pytest.approx(
        eight["http_per_s"] / eight["in_process_per_s"], abs=0.01
    )
    # Each process the searches ran in spent CPU on them, and the split is printed.
    cpu = eight["cpu_ms_per_search"]
    assert cpu["in_process"]["this_process"] > 0
    assert cpu["in_process"]["postgresql"] > 0
    assert cpu["http"]["server"] > 0
    assert cpu["http"]["postgresql"] > 0
    assert cpu["http"]["client"] > 0
    assert "the door's cost at p50, POST /api/search" in doors.summary(report)
    assert f"over HTTP: the server {cpu['http']['server']}," in doors.summary(report)
