"""Test fixtures: one embedded PostgreSQL per test session, one database at the newest schema,
and one rolled-back transaction per test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
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
    """The embedded server's URL (its `postgres` maintenance database)."""
    return embedded.start(data_dir)


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
