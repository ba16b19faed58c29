"""`corpus bench --routing` on a tiny corpus: it measures all three rows, and the repeats are
all cache hits."""

from __future__ import annotations

from app.bench.routing import bench_routing
from app.config import Settings
from tests.support import make_settings


async def test_the_routing_bench_measures_single_cold_and_cached_on_a_small_corpus(
    settings: Settings,
) -> None:
    stages: list[str] = []
    report = await bench_routing(
        make_settings(settings.data_dir, database_url=settings.database_url),
        lambda stage, done, total: stages.append(stage),
        chunks_per_workspace=100,
        query_count=10,
    )
    assert (report["workspaces"], report["queries"]) == (5, 10)
    for row in ("single_workspace_search_ms", "context_cold_ms", "context_cached_ms"):
        assert 0 < report[row]["p50"] <= report[row]["p95"] <= report[row]["p99"]
    assert report["mean_sources_per_block"] > 0
    assert {"load", "cold", "cached"} <= set(stages)
