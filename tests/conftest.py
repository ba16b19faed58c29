"""Test fixtures: one embedded PostgreSQL per test session, one database at the newest schema,
and one rolled-back transaction per test."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from app.config import Settings
from app.db import embedded
from app.main import create_app
from tests.support import (
    CHEAP_ARGON2,
    app_client,
    create_migrated_database,
    in_test_transaction,
    lifespan,
    make_settings,
)


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    """The test session's data folder, holding its embedded PostgreSQL.

    Not under pytest's own temporary folder: every pytest start makes that folder private
    again (mode 0700), which would lock the server's system user out of a running cluster.
    """
    path = Path(tempfile.mkdtemp(prefix="corpus-test-", dir="/tmp"))
    yield path
    embedded.release(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def server_url(data_dir: Path) -> str:
    """The embedded server's URL (its `postgres` maintenance database), without durability.

    The session's cluster is thrown away at the end, so nothing in it needs to survive a crash
    of the machine: no fsync, no full-page images, no wait for the WAL at commit. That takes
    most of the disk's flushing out of the suite (each copied database, each committed write of
    a running server) without changing what a query sees. Clusters that tests start themselves
    (tests/db/test_embedded.py, `corpus serve` children on data folders of their own) keep
    PostgreSQL's defaults."""
    url = embedded.start(data_dir)
    asyncio.run(_without_durability(url))
    return url


async def _without_durability(server_url: str) -> None:
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            for setting in ("fsync", "full_page_writes", "synchronous_commit"):
                await connection.execute(text(f"ALTER SYSTEM SET {setting} = off"))
            await connection.execute(text("SELECT pg_reload_conf()"))
    finally:
        await engine.dispose()


@pytest.fixture(scope="session")
def settings(server_url: str, data_dir: Path) -> Settings:
    """Settings of the session's database, at the newest schema."""
    url = create_migrated_database(server_url, data_dir, "corpus_test")
    return make_settings(data_dir, database_url=url)


@pytest.fixture(scope="session")
async def engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(settings.database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def conn(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection inside a transaction that is rolled back after the test."""
    async with engine.connect() as connection:
        transaction = await connection.begin()
        yield connection
        await transaction.rollback()


@pytest.fixture(scope="session")
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The app with its lifespan running, shared by the session's tests."""
    app = create_app(settings, argon2=CHEAP_ARGON2)
    async with lifespan(app):
        yield app


@pytest.fixture
async def client(app: FastAPI, conn: AsyncConnection) -> AsyncIterator[httpx.AsyncClient]:
    """An anonymous HTTP client of the app whose requests run inside the test's rolled-back
    transaction. `tests.accounts.authorize` and `sign_in` sign it in."""
    with in_test_transaction(app, conn):
        async with app_client(app) as client:
            yield client


@pytest.fixture
async def app_client_pair(
    app: FastAPI, conn: AsyncConnection
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Two clients with cookie jars of their own (two browsers), in the test's transaction."""
    with in_test_transaction(app, conn):
        async with app_client(app) as first, app_client(app) as second:
            yield first, second


@pytest.fixture
async def https_client(
    settings: Settings, conn: AsyncConnection
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app whose public URL is https (as behind a TLS proxy)."""
    https_settings = make_settings(
        settings.data_dir,
        database_url=settings.database_url,
        public_url="https://corpus.example",
    )
    https_app = create_app(https_settings, argon2=CHEAP_ARGON2)
    async with lifespan(https_app):
        with in_test_transaction(https_app, conn):
            async with app_client(https_app, "https://corpus.example") as client:
                yield client


@pytest.fixture
async def real_hashing_client(
    settings: Settings, conn: AsyncConnection
) -> AsyncIterator[httpx.AsyncClient]:
    """`client`, of an app hashing with Argon2's real parameters (for tests of them)."""
    real_app = create_app(settings)
    async with lifespan(real_app):
        with in_test_transaction(real_app, conn):
            async with app_client(real_app) as client:
                yield client


# The modules that take longest (each runs real processes: servers, the CLI, PostgreSQL
# clusters of their own), most first. `make test` runs the suite with xdist's loadscope, which
# hands each worker a module at a time; started last, one of these kept one worker busy for a
# minute while the other had nothing left to do. Started first, the many short modules fill in
# behind them and both workers finish together (the Makefile passes --no-loadscope-reorder, so
# xdist keeps this order instead of sorting by the number of tests).
LONG_MODULES = (
    "tests/db/test_embedded.py",
    "tests/fuzz/test_openapi_fuzz.py",
    "tests/test_cli_retrieval.py",
    "tests/db/test_replica.py",
    "tests/routing/test_replicas.py",
    "tests/mcp/test_stateless.py",
    "tests/routing/test_bench.py",
    "tests/auth/test_password_attempts.py",
    "tests/auth/test_login_throttle.py",
    "tests/agents/test_providers.py",
    "tests/mcp/test_asking.py",
    "tests/mcp/test_tasks.py",
    "tests/ops/test_backup.py",
    "tests/ops/test_load.py",
    "tests/sources/test_sync.py",
    "tests/sources/test_cli.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {module: index for index, module in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_MODULES)))
