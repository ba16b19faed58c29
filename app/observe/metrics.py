"""The metric families of `/metrics`, and the one-line calls that move them.

One registry per process, of our own (not prometheus_client's global one, which a library
could fill): every app a process builds (tests build many) moves the same families, so a scrape
shows the process. Labels are bounded sets (route templates, modes, outcomes, personas an admin
named), never a caller's text or an id."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.observe import tracing

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Search and embedding calls take milliseconds; requests and agent runs up to a minute.
FAST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
SLOW_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)

REQUEST_SECONDS = Histogram(
    "corpus_http_request_duration_seconds",
    "HTTP requests by method, route template and status",
    ["method", "route", "status"],
    buckets=SLOW_BUCKETS,
    registry=REGISTRY,
)
SEARCH_SECONDS = Histogram(
    "corpus_search_duration_seconds",
    "Searches (retrieval, query embedding included) by mode",
    ["mode"],
    buckets=FAST_BUCKETS,
    registry=REGISTRY,
)
SEARCH_PART_SECONDS = Histogram(
    "corpus_search_part_duration_seconds",
    "A search's parts by mode: query_embedding; ranking (vector walk, keyword and fusion in one "
    "statement); or vector_walk, keyword and fusion when a long hybrid search runs its halves "
    "apart",
    ["mode", "part"],
    buckets=FAST_BUCKETS,
    registry=REGISTRY,
)
INGESTED_DOCUMENTS = Counter(
    "corpus_ingest_documents_total",
    "Documents indexed (added, or changed and indexed again)",
    registry=REGISTRY,
)
INGESTED_CHUNKS = Counter(
    "corpus_ingest_chunks_total", "Chunks written by ingest", registry=REGISTRY
)
CONVERSION_FAILURES = Counter(
    "corpus_conversion_failures_total",
    "Files whose conversion to text failed, by reason (timeout, crashed, memory, or the "
    "converter's error code)",
    ["reason"],
    registry=REGISTRY,
)
EMBEDDING_SECONDS = Histogram(
    "corpus_embedding_duration_seconds",
    "Embedding calls by kind (passages, query)",
    ["kind"],
    buckets=FAST_BUCKETS,
    registry=REGISTRY,
)
EMBEDDING_BATCH = Histogram(
    "corpus_embedding_batch_size",
    "Texts per embedding call, by kind",
    ["kind"],
    buckets=BATCH_BUCKETS,
    registry=REGISTRY,
)
AGENT_RUNS = Counter(
    "corpus_agent_runs_total",
    "Answering runs by mode and outcome (answered, extractive, fell_back, error, cancelled)",
    ["mode", "outcome"],
    registry=REGISTRY,
)
AGENT_MODEL_CALLS = Counter(
    "corpus_agent_model_calls_total",
    "Model calls of answering runs, by mode",
    ["mode"],
    registry=REGISTRY,
)
AGENT_TOKENS = Counter(
    "corpus_agent_tokens_total",
    "Tokens of answering runs' model calls as the provider reported them, by mode and "
    "direction (input, output)",
    ["mode", "direction"],
    registry=REGISTRY,
)
CACHE_LOOKUPS = Counter(
    "corpus_cache_lookups_total",
    "Routed-search cache lookups by persona and result (hit, miss)",
    ["persona", "result"],
    registry=REGISTRY,
)
POOL_WAITS = Counter(
    "corpus_db_pool_waits_total",
    "Connections asked for while every one of the pool's was in use, by engine",
    ["engine"],
    registry=REGISTRY,
)
THROTTLE_REFUSALS = Counter(
    "corpus_throttle_refusals_total",
    "Requests refused by a throttle or limit, by reason",
    ["reason"],
    registry=REGISTRY,
)
RESEARCH_JOBS = Gauge(
    "corpus_research_jobs_in_state",
    "Research jobs of this process by state (queued, running)",
    ["state"],
    registry=REGISTRY,
)
RESEARCH_JOBS_ENTERED = Counter(
    "corpus_research_job_transitions_total",
    "Research jobs that entered a state (queued, running, done, failed)",
    ["state"],
    registry=REGISTRY,
)
DB_READS = Counter(
    "corpus_db_reads_total",
    "Read transactions, with a replica set, by where they ran (replica, primary) and why: "
    "replica; own_write (the caller's write not replayed yet), replica_down, replica_lagging",
    ["target", "reason"],
    registry=REGISTRY,
)
REPLICA_SERVING = Gauge(
    "corpus_db_replica_serving",
    "1 while reads go to the replica (DATABASE_READ_URL), 0 while they fall back to the primary",
    registry=REGISTRY,
)
REPLICA_LAG = Gauge(
    "corpus_db_replica_lag_bytes",
    "WAL the primary had written that the replica had not replayed, at the last check",
    registry=REGISTRY,
)


def scrape() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)


# --- connection pools ----------------------------------------------------------------------------


class Pool(Protocol):
    """What SQLAlchemy's QueuePool tells of itself."""

    def size(self) -> int: ...
    def checkedout(self) -> int: ...
    def checkedin(self) -> int: ...
    def overflow(self) -> int: ...


_pools: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


class _PoolCollector(Collector):
    """The connections of every pool the process opened, read at scrape time."""

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "corpus_db_pool_connections",
            "Database connections by engine and state (in_use, idle)",
            labels=["engine", "state"],
        )
        totals: dict[tuple[str, str], int] = {}
        for pool, engine in list(_pools.items()):
            for state, count in (("in_use", pool.checkedout()), ("idle", pool.checkedin())):
                totals[engine, state] = totals.get((engine, state), 0) + count
        for engine in ("write", "read", "side"):
            for state in ("in_use", "idle"):
                family.add_metric([engine, state], totals.get((engine, state), 0))
        yield family


REGISTRY.register(_PoolCollector())


def watch_pool(pool: Any, engine: str) -> None:
    """Report `pool`'s connections under `engine` (write, read, side) while it lives."""
    _pools[pool] = engine


def asking_pool(pool: Any, engine: str) -> None:
    """A connection is about to be taken from `pool`: count a wait when none is free (every
    connection checked out and no overflow left to open)."""
    max_overflow = getattr(pool, "_max_overflow", 0)
    if pool.checkedin() == 0 and pool.overflow() >= max_overflow:
        POOL_WAITS.labels(engine).inc()


# --- one-line calls for the services -------------------------------------------------------------


@contextmanager
def search_part(mode: str, part: str) -> Iterator[None]:
    """Time a search's part, and trace it as a span of its own (`search.<part>`)."""
    started = time.perf_counter()
    try:
        with tracing.span(f"search.{part}", {"corpus.search.mode": mode}):
            yield
    finally:
        SEARCH_PART_SECONDS.labels(mode, part).observe(time.perf_counter() - started)


def throttle_refused(reason: str) -> None:
    THROTTLE_REFUSALS.labels(reason).inc()


def cache_lookup(persona: str | None, hit: bool) -> None:
    CACHE_LOOKUPS.labels(persona or "none", "hit" if hit else "miss").inc()


def indexed(chunks: int) -> None:
    INGESTED_DOCUMENTS.inc()
    INGESTED_CHUNKS.inc(chunks)


def conversion_failed(reason: str) -> None:
    CONVERSION_FAILURES.labels(reason).inc()


def research_job(state: str, *, left: str | None = None) -> None:
    """A research job entered `state` (queued, running, done, failed), leaving `left`."""
    RESEARCH_JOBS_ENTERED.labels(state).inc()
    if left is not None:
        RESEARCH_JOBS.labels(left).dec()
    if state in ("queued", "running"):
        RESEARCH_JOBS.labels(state).inc()


def db_read(reason: str) -> None:
    """A read transaction began, with a replica set: on it (`reason` "replica") or not."""
    DB_READS.labels("replica" if reason == "replica" else "primary", reason).inc()


def replica_serving(serving: bool) -> None:
    REPLICA_SERVING.set(1 if serving else 0)


def replica_lag(lag_bytes: int) -> None:
    REPLICA_LAG.set(lag_bytes)
