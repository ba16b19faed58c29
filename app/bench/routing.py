"""`corpus bench --routing`: a persona's context block over five local workspaces, cold and
from the cache, against one single-workspace search in the same run (issue #14). Synthetic
Zipf text in a throwaway database, queries embedded with the hash embedder, so the figures are
the fan-out's and the database's, not a model's."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from app.access.principal import LOCAL_ADMIN
from app.bench import queries as bench_queries
from app.bench.evaluation import throwaway_database
from app.bench.load import Progress, Zipf, _insert_batch, percentiles
from app.config import Settings
from app.kit.secrets import SecretBox
from app.rag.embeddings.hash import HashEmbedder
from app.routing import admin as routing_admin
from app.routing import service as routing_service
from app.routing.policy import NO_FILE
from app.routing.schemas import ContextRequest, PersonaUpdate
from app.routing.state import RoutingState
from app.search import service as search_service
from app.search.schemas import SearchRequest
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate

WORKSPACES = 5
PERSONA = "bench-five"
TOP_K = 5
BATCH = 1_000


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def bench_routing(
    settings: Settings,
    progress: Progress,
    *,
    chunks_per_workspace: int = 10_000,
    query_count: int = 200,
) -> dict[str, Any]:
    """The report of `corpus bench --routing --json`."""
    hasher = HashEmbedder()
    bench_settings = settings.model_copy(
        update={
            "embeddings_provider": "hash",
            "embeddings_model": hasher.model,
            "embeddings_dim": hasher.dim,
            "retrieval_min_similarity": 0.0,
        }
    )
    corpus = Zipf(seed=11)
    slugs = [f"bench_{i}" for i in range(WORKSPACES)]
    async with throwaway_database(bench_settings, "corpus_bench_routing") as db:
        async with db.write() as conn:
            await bench_queries.drop_vector_index(conn)
            for slug in slugs:
                await workspaces_service.create_workspace(
                    conn, LOCAL_ADMIN, WorkspaceCreate(slug=slug, title=slug)
                )
        for n, slug in enumerate(slugs):
            async with db.read() as reader:
                workspace = await workspaces_service.workspace_id(reader, slug)
            assert workspace is not None
            loaded = 0
            while loaded < chunks_per_workspace:
                size = min(BATCH, chunks_per_workspace - loaded)
                bodies = [corpus.passage() for _ in range(size)]
                vectors = await hasher.embed_passages(bodies)
                async with db.write() as conn:
                    await _insert_batch(
                        conn, workspace, n * chunks_per_workspace + loaded, bodies, vectors
                    )
                loaded += size
                progress(
                    "load", n * chunks_per_workspace + loaded, WORKSPACES * chunks_per_workspace
                )
        async with db.write() as conn:
            await bench_queries.rebuild_index_and_statistics(conn)
        await bench_queries.vacuum_analyze(db.write_engine)

        state = RoutingState.open(
            bench_settings, db, hasher, SecretBox("bench-" + "x" * 40), NO_FILE
        )
        try:
            async with db.write() as conn:
                await routing_admin.set_persona(
                    conn, state, LOCAL_ADMIN, PERSONA, PersonaUpdate(workspaces=slugs)
                )
            singles = [corpus.query() for _ in range(query_count)]
            colds = [corpus.query() for _ in range(query_count)]
            single_ms: list[float] = []
            cold_ms: list[float] = []
            cached_ms: list[float] = []
            blocks: list[int] = []

            async def single(query: str) -> None:
                async with db.read() as reader:
                    await search_service.rank(
                        reader,
                        LOCAL_ADMIN,
                        hasher,
                        bench_settings,
                        SearchRequest(query=query, workspaces=[slugs[0]], top_k=TOP_K),
                    )

            async def context(query: str) -> None:
                block = await routing_service.context_block(
                    state, LOCAL_ADMIN, ContextRequest(query=query, persona=PERSONA, top_k=TOP_K)
                )
                assert not block.failures, block.failures
                blocks.append(len(block.sources))

            # Interleaved, so that drift (a busy neighbour, a checkpoint) hits both alike.
            for i, (one, many) in enumerate(zip(singles, colds, strict=True)):
                single_ms.append(await _timed(partial(single, one)))
                cold_ms.append(await _timed(partial(context, many)))
                progress("cold", i + 1, query_count)
            hits_before = state.cache.hits
            for i, many in enumerate(colds):
                cached_ms.append(await _timed(partial(context, many)))
                progress("cached", i + 1, query_count)
            assert state.cache.hits - hits_before == query_count, "every repeat is a hit"
        finally:
            await state.aclose()
    single_p = percentiles(single_ms)
    cold_p = percentiles(cold_ms)
    return {
        "workspaces": WORKSPACES,
        "chunks_per_workspace": chunks_per_workspace,
        "queries": query_count,
        "top_k": TOP_K,
        "mean_sources_per_block": round(sum(blocks) / len(blocks), 1) if blocks else 0,
        "single_workspace_search_ms": single_p,
        "context_cold_ms": cold_p,
        "context_cached_ms": percentiles(cached_ms),
        "cold_over_single_p50": round(cold_p["p50"] / single_p["p50"], 2),
        "cold_over_single_p95": round(cold_p["p95"] / single_p["p95"], 2),
    }
