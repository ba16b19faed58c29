"""What a door adds to a search: the search service called in process, against the same search
through `POST /api/search` and the MCP tool `search_docs` (a plain JSON-RPC POST), both with an
API key, against a `corpus serve` child process on 127.0.0.1 (`corpus bench` and
scripts/measure_doors.py).

A throwaway database gets generated documents of five chunks (the bench's Zipf text) through the
documents service, an editor and their key. The `hash` embedder is used throughout, so a query's
embedding costs microseconds and the figures are the doors' own cost: HTTP, authentication, the
framework, the JSON. `GET /api/me` and the `whoami` tool measure the doors with no search behind
them.

One client: the doors take turns query by query (in an order that rotates), so that a machine
whose load changes during the run weighs on every door alike; the door's cost is its p50 less
the in-process p50. Eight clients: the queries per second of eight concurrent callers in
process, and over HTTP (the issue's bar: at least 80% of in process), with the CPU each search
cost this process, the server and PostgreSQL while they ran: on two cores the rates follow
from those.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from app.access.principal import LOCAL_ADMIN
from app.auth import service as auth_service
from app.auth.schemas import ApiKeyCreate
from app.bench import queries as bench_queries
from app.bench.evaluation import throwaway_database
from app.bench.load import CHUNKS_PER_DOCUMENT, Zipf, percentiles
from app.config import Settings
from app.db import embedded
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.people import service as people_service
from app.people.passwords import Hasher
from app.people.schemas import UserCreate
from app.rag.embeddings.hash import HashEmbedder
from app.search import service as search_service
from app.search.schemas import SearchRequest

DOCUMENTS = 100
QUERIES = 300
WARM_UP = 20
TOP_K = 10
CLIENTS = 8
RATE_QUERIES = 2_000  # answered by the eight clients together: seconds, not a moment
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
SERVE_READY_S = 60

Call = Callable[[str], Awaitable[None]]


async def measure(
    settings: Settings,
    *,
    documents: int = DOCUMENTS,
    queries: int = QUERIES,
    rate_queries: int = RATE_QUERIES,
    postgres_pid: int | None = None,
) -> dict[str, Any]:
    """The doors' report: latencies of each door, one client, and eight clients' rates. The
    CPU PostgreSQL spends is counted from `postgres_pid`'s postmaster and its backends: by
    default the embedded server's, and not at all when DATABASE_URL names another."""
    bench_settings = settings.model_copy(
        update={
            "embeddings_provider": "hash",
            "embeddings_model": HashEmbedder().model,
            "embeddings_dim": HashEmbedder().dim,
        }
    )
    embedder = HashEmbedder()
    async with throwaway_database(bench_settings, "corpus_bench_doors") as db:
        key, words = await _seed(db, bench_settings, embedder, documents)
        texts = words[: WARM_UP + queries]
        principal = await auth_service.principal_from_api_key(db.lookup, db.write, key)
        assert principal is not None

        async def in_process(query: str) -> None:
            async with db.write() as conn:
                await search_service.search(
                    conn,
                    principal,
                    embedder,
                    bench_settings,
                    SearchRequest(query=query, top_k=TOP_K),
                    side=db.side_reads,
                )

        url = db.write_engine.url.render_as_string(hide_password=False)
        bearer = {"Authorization": f"Bearer {key}"}
        async with _served(url, bench_settings) as (base, server):
            wire = await _Wire.open(base)
            try:
                one_client = await _taking_turns(
                    {
                        "service, in process": in_process,
                        "POST /api/search": _searching(wire, bearer),
                        "MCP search_docs (JSON-RPC POST)": _tool(
                            wire, bearer, "search_docs", top_k=TOP_K
                        ),
                        "GET /api/me": _asking_who(wire, bearer),
                        "MCP whoami (JSON-RPC POST)": _tool(wire, bearer, "whoami"),
                    },
                    texts,
                )
            finally:
                await wire.aclose()
            rated = words[: WARM_UP + rate_queries]
            postgres = postgres_pid
            if postgres is None and not settings.database_url:
                postgres = embedded.server_pid(settings.data_dir)
            in_process_rate, in_process_cpu = await _rate(
                lambda: _nothing_to_close(in_process), rated, _Cores(None, postgres)
            )
            http_rate, http_cpu = await _rate(
                lambda: _over_http(base, bearer), rated, _Cores(server, postgres)
            )
    base_p50 = one_client["service, in process"]["p50"]
    return {
        "documents": documents,
        "chunks_per_document": CHUNKS_PER_DOCUMENT,
        "queries": queries,
        "top_k": TOP_K,
        "embedder": "hash",
        "latency_ms": one_client,
        "door_over_in_process_p50_ms": {
            door: round(one_client[door]["p50"] - base_p50, 2)
            for door in ("POST /api/search", "MCP search_docs (JSON-RPC POST)")
        },
        f"{CLIENTS}_clients": {
            "queries": rate_queries,
            "in_process_per_s": round(in_process_rate, 1),
            "http_per_s": round(http_rate, 1),
            "http_over_in_process": round(http_rate / in_process_rate, 3),
            # CPU milliseconds per search while the clients ran: this process (the callers in
            # process; over HTTP, the client), the server (over HTTP) and PostgreSQL (the
            # embedded server; None when DATABASE_URL names another).
            "cpu_ms_per_search": {
                "in_process": {
                    "this_process": in_process_cpu.this,
                    "postgresql": in_process_cpu.postgres,
                },
                "http": {
                    "client": http_cpu.this,
                    "server": http_cpu.server,
                    "postgresql": http_cpu.postgres,
                },
            },
        },
    }


async def _seed(
    db: Database, settings: Settings, embedder: HashEmbedder, documents: int
) -> tuple[str, list[str]]:
    """Generated documents, an editor and their key; returns the key and the queries."""
    corpus = Zipf(seed=7)
    for i in range(documents):
        content = "\n\n".join(corpus.passage() for _ in range(CHUNKS_PER_DOCUMENT))
        async with db.write() as conn:
            await documents_service.create(
                conn,
                LOCAL_ADMIN,
                embedder,
                settings,
                DocumentCreate(title=f"sample {i}", content=content),
            )
    async with db.write() as conn:
        user, _ = await people_service.create_user(
            conn,
            Hasher(workers=1),  # an agent has no password: nothing is hashed
            UserCreate(email="bench@example.com", role="editor", kind="agent"),
            actor=LOCAL_ADMIN,
        )
        created = await auth_service.create_key(
            conn, LOCAL_ADMIN, ApiKeyCreate(user_id=user.id, name="bench")
        )
    # As `corpus bench` does after loading: statistics for the planner, the visibility map for
    # index-only reads of the postings.
    await bench_queries.vacuum_analyze(db.write_engine)
    return created.key, [corpus.query() for _ in range(10_000)]


async def _taking_turns(doors: dict[str, Call], queries: Sequence[str]) -> dict[str, Any]:
    """Each query through every door, the doors' order rotating from one query to the next;
    the first `WARM_UP` queries are not counted."""
    names = list(doors)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i, query in enumerate(queries):
        turn = i % len(names)
        for name in names[turn:] + names[:turn]:
            started = time.perf_counter()
            await doors[name](query)
            if i >= WARM_UP:
                samples[name].append((time.perf_counter() - started) * 1000)
    return {name: percentiles(taken) for name, taken in samples.items()}


@dataclass(frozen=True, slots=True)
class _Cpu:
    """CPU milliseconds per search, by process (None: not measured)."""

    this: float
    server: float | None
    postgres: float | None


class _Cores:
    """The CPU seconds spent so far by this process, the server child (`server`, a pid) and
    PostgreSQL (`postgres`, its postmaster's pid: it and its backends)."""

    def __init__(self, server: int | None, postgres: int | None) -> None:
        self.server = server
        self.postgres = postgres

    def now(self) -> tuple[float, float | None, float | None]:
        return (
            time.process_time(),
            None if self.server is None else _seconds(psutil.Process(self.server)),
            None if self.postgres is None else _cluster_seconds(self.postgres),
        )

    def per_search(
        self,
        before: tuple[float, float | None, float | None],
        after: tuple[float, float | None, float | None],
        searches: int,
    ) -> _Cpu:
        def ms(start: float | None, end: float | None) -> float | None:
            if start is None or end is None:
                return None
            return round((end - start) * 1000 / searches, 2)

        this = ms(before[0], after[0])
        assert this is not None
        return _Cpu(this, ms(before[1], after[1]), ms(before[2], after[2]))


def _seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _cluster_seconds(postmaster: int) -> float:
    """The CPU seconds of a PostgreSQL server: its postmaster's and its backends'."""
    server = psutil.Process(postmaster)
    total = _seconds(server)
    for backend in server.children():
        with contextlib.suppress(psutil.NoSuchProcess):  # a backend that ended meanwhile
            total += _seconds(backend)
    return total


async def _rate(
    open_client: Callable[[], Awaitable[tuple[Call, Callable[[], Awaitable[None]]]]],
    queries: Sequence[str],
    cores: _Cores,
) -> tuple[float, _Cpu]:
    """Searches per second of `CLIENTS` callers at once (each opened by `open_client`), each
    taking the next query as soon as its last one is answered; the first `WARM_UP` queries
    warm each caller up, all callers at once, so that the pools hold a warm connection for
    each before the clock starts (warmed one caller after another, the pools held one, and the
    measured run paid for opening the others: a backend's first statements cost it its
    catalog caches and each statement's preparation)."""
    pending: Iterator[str] = iter(queries[WARM_UP:])
    opened = [await open_client() for _ in range(CLIENTS)]
    try:

        async def warm(call: Call) -> None:
            for query in queries[:WARM_UP]:
                await call(query)

        await asyncio.gather(*(warm(call) for call, _ in opened))

        async def client(call: Call) -> int:
            done = 0
            for query in pending:
                await call(query)
                done += 1
            return done

        spent, started = cores.now(), time.perf_counter()
        answered = sum(await asyncio.gather(*(client(call) for call, _ in opened)))
        took = time.perf_counter() - started
        return answered / took, cores.per_search(spent, cores.now(), answered)
    finally:
        for _, close in opened:
            await close()


async def _nothing_to_close(call: Call) -> tuple[Call, Callable[[], Awaitable[None]]]:
    async def close() -> None:
        return None

    return call, close


async def _over_http(
    base: str, headers: dict[str, str]
) -> tuple[Call, Callable[[], Awaitable[None]]]:
    wire = await _Wire.open(base)
    return _searching(wire, headers), wire.aclose


def _searching(wire: _Wire, headers: dict[str, str]) -> Call:
    async def search(query: str) -> None:
        await wire.exchange(
            _request("POST", "/api/search", headers, {"query": query, "top_k": TOP_K})
        )

    return search


def _asking_who(wire: _Wire, headers: dict[str, str]) -> Call:
    request = _request("GET", "/api/me", headers)

    async def me(_: str) -> None:
        await wire.exchange(request)

    return me


def _tool(wire: _Wire, headers: dict[str, str], name: str, **arguments: Any) -> Call:
    """A `tools/call` as a plain JSON-RPC POST (stateless: no session to open first); the
    query, for a tool that takes one."""

    async def call(query: str) -> None:
        given = {"query": query, **arguments} if name == "search_docs" else arguments
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": given},
        }
        answer = await wire.exchange(_request("POST", "/mcp", headers | MCP_HEADERS, body))
        # A JSON answer, or one event whose data is the JSON-RPC answer.
        text = answer.decode()
        data = text.split("data: ", 1)[1].split("\n", 1)[0] if text.startswith("event") else text
        if json.loads(data).get("result", {}).get("isError") is not False:
            raise RuntimeError(f"{name} failed: {text[:500]}")

    return call


class _Wire:
    """One keep-alive HTTP/1.1 connection, written by hand: the bench's client. httpx spends
    about a millisecond of CPU on a request (building it, its cookies, parsing the answer), and
    on two cores that is taken from the server being measured; this sends prepared bytes and
    reads the answer's length, status and body, nothing more."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def open(cls, base: str) -> _Wire:
        host, _, port = base.removeprefix("http://").partition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def exchange(self, request: bytes) -> bytes:
        """Send a whole request; the answer's body (a 2xx's, else an error)."""
        self._writer.write(request)
        head = await self._reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        fields = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:] if line)
        }
        if b"content-length" in fields:
            body = await self._reader.readexactly(int(fields[b"content-length"]))
        else:  # chunked: MCP's event stream
            parts = []
            while size := int((await self._reader.readuntil(b"\r\n")).strip(), 16):
                parts.append(await self._reader.readexactly(size + 2))
            await self._reader.readuntil(b"\r\n")
            body = b"".join(part[:-2] for part in parts)
        if not 200 <= status < 300:
            raise RuntimeError(f"HTTP {status}: {body[:500]!r}")
        return body

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()


def _request(method: str, path: str, headers: dict[str, str], payload: Any = None) -> bytes:
    body = b"" if payload is None else json.dumps(payload).encode()
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    if payload is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@asynccontextmanager
async def _served(url: str, settings: Settings) -> AsyncIterator[tuple[str, int]]:
    """`corpus serve` on a free port of 127.0.0.1 over `url`, with the hash embedder, for the
    block: its base URL and its pid. Its log is in the error if it does not become ready."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    # Not settings: what the child inherits (PATH, HOME, PYTHONPATH), without the configuration
    # of this process, which the child is given explicitly.
    inherited = os.environ  # noqa: TID251
    env = {k: v for k, v in inherited.items() if not k.startswith(("CORPUS_", "EMBEDDINGS_"))}
    env |= {
        "DATABASE_URL": url,
        "EMBEDDINGS_PROVIDER": "hash",
        "CORPUS_PUBLIC_URL": base,
        "CORPUS_DATA_DIR": str(settings.data_dir),
        "CORPUS_LOG_LEVEL": "WARNING",
    }
    log = Path(tempfile.mkdtemp(prefix="corpus-doors-")) / "serve.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + SERVE_READY_S
        async with httpx.AsyncClient() as http:
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"corpus serve exited:\n{log.read_text()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"corpus serve was not ready within {SERVE_READY_S} s:\n{log.read_text()}"
                    )
                try:
                    if (await http.get(f"{base}/readyz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 30)


def summary(report: dict[str, Any]) -> str:
    """The report as `corpus bench` and scripts/measure_doors.py print it."""
    lines = [
        f"doors: {report['documents']} documents x {report['chunks_per_document']} chunks, "
        f"{report['queries']} queries taking turns, top {report['top_k']}, hash embedder",
        f"  {'door':<34} {'p50':>7} {'p95':>7} {'p99':>7} {'mean':>7}  (ms)",
    ]
    for door, row in report["latency_ms"].items():
        lines.append(
            f"  {door:<34} {row['p50']:>7} {row['p95']:>7} {row['p99']:>7} {row['mean']:>7}"
        )
    for door, cost in report["door_over_in_process_p50_ms"].items():
        lines.append(f"  the door's cost at p50, {door}: {cost} ms")
    eight = report[f"{CLIENTS}_clients"]
    lines.append(
        f"  {CLIENTS} clients: {eight['in_process_per_s']} searches/s in process, "
        f"{eight['http_per_s']} over HTTP ({eight['http_over_in_process']} of in process)"
    )
    cpu = eight["cpu_ms_per_search"]
    lines.append(
        f"  CPU ms per search, in process: this process {cpu['in_process']['this_process']}, "
        f"PostgreSQL {cpu['in_process']['postgresql']}; over HTTP: the server "
        f"{cpu['http']['server']}, PostgreSQL {cpu['http']['postgresql']}, the client "
        f"{cpu['http']['client']}"
    )
    return "\n".join(lines)
