"""A remote workspace's address is checked again whenever it is searched, on a Corpus that allows
no private address (the default): a row that points inside the network (saved before the rules,
or while private addresses were allowed) and a name whose DNS answer changed to loopback after
it was saved are both refused before anything connects. The server resolves names through a
resolver the test controls: DNS that changes when the test says so."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.config import Settings
from app.db.tables import workspaces
from tests.running import Running, run_fresh_corpus
from tests.support import listening_socket, serving

# A public address, never contacted: what the name first resolves to.
PUBLIC = "93.184.215.14"


class Names:
    """DNS the test controls: names it was told, the system's resolver for the rest; and every
    name asked."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host in self.answers:
            return self.answers[host]
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return [str(info[4][0]) for info in infos]


@pytest.fixture(scope="module")
def names() -> Names:
    return Names()


@pytest.fixture(scope="module")
async def corpus(
    settings: Settings, server_url: str, data_dir: Path, names: Names
) -> AsyncIterator[Running]:
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_remote_addresses", resolve=names
    ) as running:
        yield running


@pytest.fixture
async def remote() -> AsyncIterator[tuple[int, list[str]]]:
    """An Anvil-compatible server on loopback: its port, and the queries it was sent."""
    seen: list[str] = []

    async def search(request: Request) -> JSONResponse:
        seen.append((await request.json())["query"])
        return JSONResponse({"results": [{"title": "Inside", "text": "An internal answer."}]})

    sock, url = listening_socket()
    app = Starlette(routes=[Route("/v1/knowledge/search", search, methods=["POST"])])
    async with serving(app, sock, lifespan="off"):
        yield int(url.rsplit(":", 1)[1]), seen


async def _search(corpus: Running, slug: str) -> dict[str, object]:
    admin = await corpus.account("admin")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer, timeout=30) as http:
        reply = await http.post(
            "/v1/knowledge/search-multi", json={"query": "anything", "workspaces": [slug]}
        )
    assert reply.status_code == 200, reply.text
    body: dict[str, object] = reply.json()
    return body


async def test_a_remote_saved_at_a_loopback_name_is_refused_when_searched(
    corpus: Running, remote: tuple[int, list[str]]
) -> None:
    port, seen = remote
    # As a row saved before the address rules, or while CORPUS_REMOTE_ALLOW_PRIVATE was on.
    async with corpus.db.write() as conn:
        await conn.execute(
            insert(workspaces).values(
                slug="remote_legacy", title="Legacy", remote_url=f"http://localhost:{port}"
            )
        )
    body = await _search(corpus, "remote_legacy")
    assert body["results"] == []
    assert [f["workspace"] for f in body["failures"]] == ["remote_legacy"]  # type: ignore[attr-defined]
    assert seen == []


async def test_a_remote_whose_name_comes_to_resolve_to_loopback_is_refused_at_connect_time(
    corpus: Running, names: Names, remote: tuple[int, list[str]]
) -> None:
    port, seen = remote
    names.answers["partner.test"] = [PUBLIC]
    admin = await corpus.account("admin")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer, timeout=30) as http:
        created = await http.post(
            "/api/workspaces",
            json={"slug": "partner", "title": "P", "remote_url": f"http://partner.test:{port}"},
        )
        assert created.status_code == 201, created.text
        # The name's owner points it at loopback once the workspace is saved.
        names.answers["partner.test"] = ["127.0.0.1"]
        names.asked.clear()
        body = await _search(corpus, "partner")
    assert body["results"] == []
    assert [f["workspace"] for f in body["failures"]] == ["partner"]  # type: ignore[attr-defined]
    assert "partner.test" in names.asked
    assert seen == []
