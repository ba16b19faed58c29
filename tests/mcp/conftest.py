"""A running Corpus for the agents' door: uvicorn on 127.0.0.1 over a database of its own
(everything commits), reached with the MCP SDK's real client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from app.config import Settings
from tests.accounts import Account
from tests.mcp.browser import Browser, signed_in_browser
from tests.running import Running, run_fresh_corpus


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    # Every test here registers clients from 127.0.0.1: far more than the default allows.
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_mcp", register_rate_per_address="10000/hour"
    ) as running:
        yield running


@pytest.fixture
async def person(corpus: Running) -> Account:
    """An editor of the module's Corpus, signed in by `browser`."""
    return await corpus.account("editor")


@pytest.fixture
async def browser(corpus: Running, person: Account) -> AsyncIterator[Browser]:
    async with signed_in_browser(corpus, person) as browser:
        yield browser


@asynccontextmanager
async def mcp_client(url: str, bearer: str, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `Authorization: Bearer <bearer>`; `mode`
    is the SDK's: "auto" (discover, the newest revision), "legacy" (the 2025-11-25 handshake)
    or a revision pinned."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"})
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client
