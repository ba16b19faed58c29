"""A running Corpus for the agents' door: uvicorn on 127.0.0.1 over a database of its own
(everything commits), reached with the MCP SDK's real client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from app.config import Settings
from app.db.engine import Database
from app.main import create_app
from tests.accounts import Account, make_account
from tests.support import listening_socket, make_settings, migrated_database, serving


@dataclass
class Running:
    """A served Corpus: its URL, settings and database."""

    url: str
    settings: Settings
    db: Database

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    async def account(self, role: str, *, kind: str = "human") -> Account:
        async with self.db.write() as conn:
            return await make_account(conn, role, kind=kind)  # type: ignore[arg-type]


@asynccontextmanager
async def run_corpus(data_dir: Path, database_url: str) -> AsyncIterator[Running]:
    """Serve Corpus on a free port, its public URL that port."""
    sock, url = listening_socket()
    port = int(url.rsplit(":", 1)[1])
    settings = make_settings(data_dir, database_url=database_url, port=port, public_url=url)
    db = Database(database_url)
    try:
        async with serving(create_app(settings), sock):
            yield Running(url=url, settings=settings, db=db)
    finally:
        await db.dispose()


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    database_url = await migrated_database(server_url, data_dir, "corpus_mcp")
    async with run_corpus(data_dir, database_url) as running:
        yield running


@asynccontextmanager
async def mcp_client(url: str, bearer: str) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `Authorization: Bearer <bearer>`."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client
