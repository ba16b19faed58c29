"""Mixed traffic from concurrent clients against two `corpus serve` processes on one data folder
(one embedded PostgreSQL), on 127.0.0.1 only, bounded in time and in requests.

    PYTHONPATH=. .venv/bin/python scripts/load.py [--clients 16] [--seconds 180]
                                                  [--max-requests 50000] [--json FILE]

Each client is a person of its own (an editor with a password and an API key) and loops over a
weighted mix: searches, uploads, asks answered extractively (the first process has no model),
asks answered by a scripted model (the second process's OpenAI-compatible provider is a
scripted server in this process: a search, then an answer citing it), MCP tool calls
(`search_docs`, a raw JSON-RPC POST), and sign-ins (real Argon2). Requests alternate between
the two processes; each client runs every operation once before the weighted mix. Prints
throughput and p50/p95/p99 per operation; any error (an unexpected status, an `error` event, a
tool error) is counted, and the exit status is 1 if there was one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.bench.load import percentiles
from tests.agents.providers import ScriptedServer, Turn
from tests.support import (
    PROJECT_ROOT,
    child_env,
    free_port,
    listening_socket,
    serving,
    start_corpus,
    wait_until_ready,
)

SECRET = "load-test-secret-key-" + "s" * 32
PASSWORD = "a long enough load password"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
# (operation, weight): reads dominate, as they do in use.
MIX = (
    ("search", 35),
    ("mcp_search_docs", 15),
    ("upload", 15),
    ("ask_extractive", 10),
    ("ask_model", 10),
    ("sign_in", 15),
)
TOPICS = ["deploy", "rollback", "backup", "restore", "oncall", "cache", "search", "metrics"]


def _respond(body: dict[str, Any]) -> Turn:
    """The scripted model: search first, then answer citing what the search returned."""
    if body["messages"][-1]["role"] == "tool":
        return Turn(text="Roll back with make rollback, then watch the error rate [1].")
    return Turn(tool="search_corpus", args={"query": "roll back a deploy"})


@dataclass
class Client:
    email: str
    key: str


@dataclass
class Tally:
    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    requests: int = 0


def _document(rng: random.Random, n: int) -> str:
    words = rng.choices(TOPICS, k=60)
    return f"Note {n}. " + " ".join(words) + ". Roll back with make rollback when in doubt."


async def _ask(http: httpx.AsyncClient, key: str, mode: str) -> str | None:
    body = {"question": "How do I roll back a deploy?", "mode": mode}
    async with http.stream(
        "POST", "/api/ask", json=body, headers={"Authorization": f"Bearer {key}"}
    ) as reply:
        text = (await reply.aread()).decode()
    if reply.status_code != 200:
        return f"ask {reply.status_code}: {text[:200]}"
    if "event: done" not in text or "event: error" in text:
        return f"ask without done: {text[-300:]}"
    return None


async def _one(
    op: str, http: httpx.AsyncClient, client: Client, rng: random.Random, n: int
) -> str | None:
    """Run one operation; the error, or None."""
    bearer = {"Authorization": f"Bearer {client.key}"}
    if op == "search":
        query = " ".join(rng.sample(TOPICS, 2))
        reply = await http.post("/api/search", json={"query": query}, headers=bearer)
        return None if reply.status_code == 200 else f"search {reply.status_code}: {reply.text}"
    if op == "upload":
        made = {"title": f"note {client.email} {n}", "content": _document(rng, n)}
        reply = await http.post("/api/documents", json=made, headers=bearer)
        return None if reply.status_code == 201 else f"upload {reply.status_code}: {reply.text}"
    if op in ("ask_extractive", "ask_model"):
        return await _ask(http, client.key, "fast")
    if op == "mcp_search_docs":
        call = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": rng.choice(TOPICS)}},
        }
        reply = await http.post("/mcp", json=call, headers={**bearer, **MCP_HEADERS})
        if reply.status_code != 200 or reply.json().get("result", {}).get("isError") is not False:
            return f"mcp {reply.status_code}: {reply.text[:300]}"
        return None
    if op == "sign_in":
        login = {"email": client.email, "password": PASSWORD}
        reply = await http.post("/api/auth/login", json=login)
        return None if reply.status_code == 200 else f"sign-in {reply.status_code}: {reply.text}"
    raise AssertionError(op)


async def _client_loop(
    index: int,
    client: Client,
    bases: tuple[str, str],
    deadline: float,
    budget: list[int],
    tally: Tally,
) -> None:
    rng = random.Random(index)
    ops, weights = zip(*MIX, strict=True)
    async with (
        httpx.AsyncClient(base_url=bases[0], timeout=60) as first,
        httpx.AsyncClient(base_url=bases[1], timeout=60) as second,
    ):
        n = 0
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            n += 1
            # Each operation once first, so that even a short run covers the mix.
            op = ops[(index + n) % len(ops)] if n <= len(ops) else rng.choices(ops, weights)[0]
            # The extractive asks go to the process without a model, the model's to the other;
            # everything else alternates.
            http = {"ask_extractive": first, "ask_model": second}.get(
                op, first if n % 2 else second
            )
            started = time.perf_counter()
            try:
                error = await _one(op, http, client, rng, n)
            except httpx.HTTPError as exc:
                error = f"{op}: {type(exc).__name__} {exc}"
            tally.samples[op].append((time.perf_counter() - started) * 1000)
            tally.requests += 1
            if error is not None:
                tally.errors.append(error)


def _serve(data: Path, port: int, log: Path, **settings: str) -> subprocess.Popen[bytes]:
    env = child_env(
        CORPUS_DATA_DIR=str(data),
        EMBEDDINGS_PROVIDER="hash",
        SECRET_KEY=SECRET,
        CORPUS_SIGNIN_RATE_PER_ADDRESS="1000000/minute",
        CORPUS_SIGNIN_RATE="1000000/minute",
        CORPUS_LOG_LEVEL="WARNING",
        **settings,
    )
    return start_corpus(["serve", "--port", str(port)], env, log)


def _corpus(data: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=PROJECT_ROOT,
        env=child_env(CORPUS_DATA_DIR=str(data), EMBEDDINGS_PROVIDER="hash", SECRET_KEY=SECRET),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


async def _people(base: str, admin_key: str, count: int) -> list[Client]:
    clients = []
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60
    ) as http:
        for i in range(count):
            email = f"load-{i}@example.com"
            person = await http.post(
                "/api/people",
                json={"email": email, "role": "editor", "kind": "human", "password": PASSWORD},
            )
            person.raise_for_status()
            key = await http.post(
                "/api/keys", json={"user_id": person.json()["id"], "name": "load"}
            )
            key.raise_for_status()
            clients.append(Client(email=email, key=key.json()["key"]))
        rng = random.Random(0)
        for n in range(40):
            made = await http.post(
                "/api/documents", json={"title": f"seed {n}", "content": _document(rng, n)}
            )
            made.raise_for_status()
    return clients


async def run(clients: int, seconds: float, max_requests: int) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="corpus-load-", dir="/tmp"))
    provider = ScriptedServer([Turn(text="unused")], respond=_respond)
    sock, provider_url = listening_socket()
    servers: list[subprocess.Popen[bytes]] = []
    try:
        async with serving(provider.app(), sock, lifespan="off"):
            ports = (free_port(), free_port())
            bases = (f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}")
            logs = (data / "serve-extractive.log", data / "serve-model.log")
            servers.append(_serve(data, ports[0], logs[0], ANSWER_PROVIDER="none"))
            await asyncio.to_thread(wait_until_ready, f"{bases[0]}/readyz", servers[0], logs[0])
            servers.append(
                _serve(
                    data,
                    ports[1],
                    logs[1],
                    ANSWER_PROVIDER="openai",
                    OPENAI_BASE_URL=f"{provider_url}/v1",
                    OPENAI_API_KEY="scripted",
                    ANSWER_MODEL="scripted",
                )
            )
            await asyncio.to_thread(wait_until_ready, f"{bases[1]}/readyz", servers[1], logs[1])
            await asyncio.to_thread(
                _corpus, data, "users", "create", "--email", "admin@example.com", "--role",
                "admin", "--password", PASSWORD,
            )  # fmt: skip
            admin_key = (
                (
                    await asyncio.to_thread(
                        _corpus,
                        data,
                        "keys",
                        "create",
                        "--email",
                        "admin@example.com",
                        "--name",
                        "load",
                    )  # fmt: skip
                )
                .strip()
                .splitlines()[-1]
            )
            people = await _people(bases[0], admin_key, clients)
            tally = Tally()
            budget = [max_requests]
            started = time.monotonic()
            deadline = started + seconds
            await asyncio.gather(
                *(
                    _client_loop(i, person, bases, deadline, budget, tally)
                    for i, person in enumerate(people)
                )
            )
            elapsed = time.monotonic() - started
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(data, ignore_errors=True)
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": tally.requests,
        "throughput_rps": round(tally.requests / elapsed, 1),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:5],
        "operations": {
            op: {
                "count": len(samples),
                "per_s": round(len(samples) / elapsed, 2),
                **percentiles(samples),
            }
            for op, samples in sorted(tally.samples.items())
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    report = asyncio.run(run(args.clients, args.seconds, args.max_requests))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{report['clients']} clients, {report['seconds']} s: {report['requests']} requests, "
        f"{report['throughput_rps']}/s, {report['errors']} errors"
    )
    print(f"{'operation':<16} {'count':>6} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for op, row in report["operations"].items():
        print(
            f"{op:<16} {row['count']:>6} {row['per_s']:>7} {row['p50']:>8} {row['p95']:>8} "
            f"{row['p99']:>8}"
        )
    for error in report["first_errors"]:
        print(f"error: {error}", file=sys.stderr)
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
