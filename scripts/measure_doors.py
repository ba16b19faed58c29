"""Measure what each door adds to a search: the retrieval service called in-process, against the
same search through `POST /api/search` and through the MCP tool `search_docs`, both with an API
key, against a `corpus serve` child process on 127.0.0.1.

    .venv/bin/python scripts/measure_doors.py [--documents 400] [--queries 300] [--json]

A throwaway database on the configured server (the embedded one unless DATABASE_URL is set)
gets `--documents` generated documents of five chunks through the documents service, an editor
and a key. The `hash` embedder is used throughout, so a query's embedding costs microseconds and
the figures are the doors' own cost: parsing, authentication (one indexed lookup per request),
the transaction, the JSON. Each door answers the same queries, one at a time, after 20 warm-up
queries. MCP is measured twice: a raw JSON-RPC POST, and the SDK's own client (which adds its
client-side work). `GET /api/me` and the `whoami` tool measure the doors with no search behind
them. Prints p50/p95/p99 and mean in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

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
from app.rag.embeddings import make_embedder
from app.search import service as search_service
from app.search.schemas import SearchRequest

WARM_UP = 20
TOP_K = 10
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}

Search = Callable[[str], Awaitable[None]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _seed(db: Database, settings: Settings, documents: int) -> tuple[str, list[str]]:
    """Generated documents, an editor and their key; returns the key and the queries' words."""
    corpus = Zipf(seed=7)
    embedder = make_embedder(settings)
    try:
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
    finally:
        await embedder.aclose()
    # As `corpus bench` does after loading: statistics for the planner, the visibility map for
    # index-only reads of the postings.
    await bench_queries.vacuum_analyze(db.write_engine)
    return created.key, [corpus.query() for _ in range(10_000)]


async def _time(search: Search, queries: list[str]) -> dict[str, float]:
    for query in queries[:WARM_UP]:
        await search(query)
    samples: list[float] = []
    for query in queries[WARM_UP:]:
        started = time.perf_counter()
        await search(query)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def _serve(url: str, port: int, settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORPUS_", "EMBEDDINGS_"))}
    env |= {
        "DATABASE_URL": url,
        "EMBEDDINGS_PROVIDER": "hash",
        "CORPUS_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "CORPUS_DATA_DIR": str(settings.data_dir),
        "CORPUS_LOG_LEVEL": "WARNING",
    }
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            if process.poll() is not None:
                raise SystemExit(f"corpus serve exited:\n{log.read_text()}")
            try:
                if (await http.get(f"{base}/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"corpus serve was not ready within 60 s:\n{log.read_text()}")


async def _call_tool(http: httpx.AsyncClient, name: str, arguments: dict[str, Any]) -> None:
    """One `tools/call` as a plain JSON-RPC POST (stateless: no session to open first)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    reply = await http.post("/mcp", json=body, headers=MCP_HEADERS)
    reply.raise_for_status()
    result = reply.json().get("result", {})
    assert result.get("isError") is False, reply.text


async def measure(documents: int, n_queries: int) -> dict[str, Any]:
    settings = Settings(embeddings_provider="hash")
    async with throwaway_database(settings, "corpus_doors") as db:
        key, words = await _seed(db, settings, documents)
        queries = words[: WARM_UP + n_queries]
        url = db.write_engine.url.render_as_string(hide_password=False)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        log = Path(tempfile.mkdtemp(prefix="corpus-doors-")) / "serve.log"
        server = _serve(url, port, settings, log)
        try:
            await _wait_ready(base, server, log)
            results: dict[str, Any] = {}

            embedder = make_embedder(settings)
            async with db.write() as conn:
                principal = await auth_service.principal_from_api_key(conn, key)
            assert principal is not None

            async def in_process(query: str) -> None:
                async with db.write() as conn:
                    await search_service.search(
                        conn, principal, embedder, settings, SearchRequest(query=query, top_k=TOP_K)
                    )

            results["service, in process"] = await _time(in_process, queries)
            await embedder.aclose()

            bearer = {"Authorization": f"Bearer {key}"}
            async with httpx.AsyncClient(base_url=base, headers=bearer) as http:

                async def over_http(query: str) -> None:
                    reply = await http.post("/api/search", json={"query": query, "top_k": TOP_K})
                    reply.raise_for_status()

                async def over_mcp(query: str) -> None:
                    await _call_tool(http, "search_docs", {"query": query, "top_k": TOP_K})

                async def me_over_http(_: str) -> None:
                    (await http.get("/api/me")).raise_for_status()

                async def me_over_mcp(_: str) -> None:
                    await _call_tool(http, "whoami", {})

                results["POST /api/search"] = await _time(over_http, queries)
                results["MCP search_docs (JSON-RPC POST)"] = await _time(over_mcp, queries)
                # The doors alone: who am I, with no search behind it.
                results["GET /api/me"] = await _time(me_over_http, queries)
                results["MCP whoami (JSON-RPC POST)"] = await _time(me_over_mcp, queries)

            sdk_http = create_mcp_http_client(headers=bearer)
            async with (
                sdk_http,
                Client(streamable_http_client(f"{base}/mcp", http_client=sdk_http)) as client,
            ):

                async def over_sdk(query: str) -> None:
                    result = await client.call_tool("search_docs", {"query": query, "top_k": TOP_K})
                    assert result.is_error is False, result.content

                results["MCP search_docs (SDK client)"] = await _time(over_sdk, queries)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "documents": documents,
        "chunks_per_document": CHUNKS_PER_DOCUMENT,
        "queries": n_queries,
        "top_k": TOP_K,
        "embedder": "hash",
        "latency_ms": results,
    }


def _positive(value: str) -> int:
    number = int(value) if value.isdigit() else 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=_positive, default=400)
    parser.add_argument("--queries", type=_positive, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings(embeddings_provider="hash")
    with embedded.attached(settings):
        report = asyncio.run(measure(args.documents, args.queries))
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"{report['documents']} documents x {report['chunks_per_document']} chunks, "
        f"{report['queries']} queries, top {report['top_k']}, hash embedder"
    )
    print(f"{'door':<34} {'p50':>7} {'p95':>7} {'p99':>7} {'mean':>7}  (ms)")
    for door, row in report["latency_ms"].items():
        print(f"{door:<34} {row['p50']:>7} {row['p95']:>7} {row['p99']:>7} {row['mean']:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
