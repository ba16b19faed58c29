"""A running Corpus for tests over real HTTP: uvicorn on 127.0.0.1 in the test's event loop,
over a database of its own (everything commits)."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from app.config import Settings
from app.db.engine import Database
from app.kit.addresses import Resolver
from app.main import create_app
from tests.accounts import Account, make_account
from tests.support import (
    CHEAP_ARGON2,
    listening_socket,
    make_settings,
    migrated_database,
    serving,
)


@dataclass
class Running:
    """A served Corpus: its URL, settings and database, and the app (tests that add a route)."""

    url: str
    settings: Settings
    db: Database
    app: FastAPI

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    async def account(self, role: str, *, kind: str = "human") -> Account:
        """An account whose password is hashed as this server hashes (cheaply, or for real)."""
        hasher = self.app.state.resources.hasher
        async with self.db.write() as conn:
            return await make_account(conn, role, kind=kind, hasher=hasher)  # type: ignore[arg-type]


@asynccontextmanager
async def run_corpus(
    data_dir: Path,
    database_url: str,
    *,
    real_hashing: bool = False,
    resolve: Resolver | None = None,
    client_tls: ssl.SSLContext | None = None,
    **overrides: Any,
) -> AsyncIterator[Running]:
    """Serve Corpus on a free port, its public URL that port; `overrides` are settings.
    Passwords are hashed with `CHEAP_ARGON2` unless `real_hashing`; `resolve` stands in for
    the system's name resolver in the address rules of outgoing connections, and `client_tls`
    for the certificate authorities OAuth clients' metadata documents are verified with."""
    sock, url = listening_socket()
    port = int(url.rsplit(":", 1)[1])
    settings = make_settings(
        data_dir, database_url=database_url, port=port, public_url=url, **overrides
    )
    db = Database(database_url)
    app = create_app(
        settings,
        argon2=None if real_hashing else CHEAP_ARGON2,
        resolve=resolve,
        client_tls=client_tls,
    )
    try:
        async with serving(app, sock):
            yield Running(url=url, settings=settings, db=db, app=app)
    finally:
        await db.dispose()


@asynccontextmanager
async def run_fresh_corpus(
    server_url: str, data_dir: Path, prefix: str, **overrides: Any
) -> AsyncIterator[Running]:
    """`run_corpus` over a new database of its own, at the newest schema, named `prefix_...`."""
    database_url = await migrated_database(server_url, data_dir, prefix)
    async with run_corpus(data_dir, database_url, **overrides) as running:
        yield running
