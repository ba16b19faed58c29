"""While PostgreSQL cannot be reached every door answers 503 `unavailable` with `Retry-After`,
and serves again by itself once it is back.

Two ways down: a TCP relay of the test's own, which the test takes down (refusing new
connections and cutting the open ones) and brings back up on the same port; and an embedded
PostgreSQL of the test's own, stopped with `pg_ctl stop` and started again (its Unix socket
goes away with it: a connection attempt meets no file, not a refusal)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from app.db import embedded
from tests.running import Running, run_corpus
from tests.support import migrated_database


class Relay:
    """Forwards TCP connections on a loopback port to PostgreSQL's Unix socket."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.port = 0
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        await self.server.wait_closed()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pg_reader, pg_writer = await asyncio.open_unix_connection(self.socket_path)
        self.links |= {writer, pg_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        await asyncio.gather(pipe(reader, pg_writer), pipe(pg_reader, writer))
        self.links -= {writer, pg_writer}


@pytest.fixture(scope="module")
async def relayed(server_url: str, data_dir: Path) -> AsyncIterator[tuple[Running, Relay]]:
    url = make_url(await migrated_database(server_url, data_dir, "corpus_outage"))
    host, port = url.query.get("host"), url.query.get("port", "5432")
    relay = Relay(f"{host}/.s.PGSQL.{port}")
    await relay.up()
    proxied = url.set(host="127.0.0.1", port=relay.port, query={})
    try:
        async with run_corpus(data_dir, proxied.render_as_string(hide_password=False)) as running:
            yield running, relay
    finally:
        if relay.server is not None and relay.server.is_serving():
            await relay.down()


REGISTRATION = {"redirect_uris": ["http://127.0.0.1:33418/callback"], "client_name": "outage"}
MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
WHOAMI = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}}


async def _each_door(running: Running, key: dict[str, str]) -> dict[str, httpx.Response]:
    async with httpx.AsyncClient(base_url=running.url, timeout=30) as http:
        return {
            "api": await http.get("/api/documents", headers=key),
            "mcp": await http.post(
                "/mcp", content=json.dumps(WHOAMI), headers={**MCP_HEADERS, **key}
            ),
            "register": await http.post("/register", json=REGISTRATION),
        }


async def test_a_database_outage_is_a_503_with_retry_after_and_passes_by_itself(
    relayed: tuple[Running, Relay],
) -> None:
    running, relay = relayed
    editor = await running.account("editor")
    before = await _each_door(running, editor.bearer)
    assert {door: r.status_code for door, r in before.items()} == {
        "api": 200,
        "mcp": 200,
        "register": 201,
    }

    await relay.down()
    during = await _each_door(running, editor.bearer)
    for door, reply in during.items():
        assert reply.status_code == 503, (door, reply.text)
        assert int(reply.headers["retry-after"]) > 0, door
    assert during["api"].json()["error"]["code"] == "unavailable"
    assert during["mcp"].json()["error"]["code"] == "unavailable"
    assert during["register"].json()["error"] == "temporarily_unavailable"

    await relay.up()
    after = await _each_door(running, editor.bearer)
    assert {door: r.status_code for door, r in after.items()} == {
        "api": 200,
        "mcp": 200,
        "register": 201,
    }


@pytest.fixture(scope="module")
async def own_server() -> AsyncIterator[tuple[Running, Path]]:
    """A Corpus over an embedded PostgreSQL of the module's own, which the test stops."""
    folder = Path(tempfile.mkdtemp(prefix="corpus-outage-", dir="/tmp"))
    try:
        server_url = await asyncio.to_thread(embedded.start, folder)
        database_url = await migrated_database(server_url, folder, "corpus_stopped")
        async with run_corpus(folder, database_url) as running:
            yield running, folder
    finally:
        await asyncio.to_thread(embedded.release, folder)
        await asyncio.to_thread(embedded.stop_server, folder)
        shutil.rmtree(folder, ignore_errors=True)


async def _every_door(running: Running, key: dict[str, str]) -> dict[str, httpx.Response]:
    token = {"grant_type": "authorization_code", "code": "cac_x", "client_id": "nobody"}
    async with httpx.AsyncClient(base_url=running.url, timeout=30) as http:
        return {
            **await _each_door(running, key),
            "api search": await http.post("/api/search", json={"query": "x"}, headers=key),
            "v1": await http.post(
                "/v1/knowledge/search-multi",
                json={"query": "x", "workspaces": ["default"]},
                headers=key,
            ),
            "token": await http.post("/token", data=token),
        }


async def test_a_stopped_embedded_server_is_a_503_at_every_door_until_it_is_started_again(
    own_server: tuple[Running, Path],
) -> None:
    running, folder = own_server
    editor = await running.account("editor")
    before = await _every_door(running, editor.bearer)
    assert before["api"].status_code == 200
    assert before["mcp"].status_code == 200
    assert before["register"].status_code == 201

    await asyncio.to_thread(embedded.stop_server, folder)
    assert embedded.server_pid(folder) is None
    # Twice: the pool's connections die with the server first, then no connection can be made.
    for _ in range(2):
        during = await _every_door(running, editor.bearer)
        for door, reply in during.items():
            assert reply.status_code == 503, (door, reply.text)
            assert int(reply.headers["retry-after"]) > 0, door
            assert reply.headers["content-type"].startswith("application/json"), door
        for door in ("api", "api search", "v1", "mcp"):
            assert during[door].json()["error"]["code"] == "unavailable", door
        for door in ("register", "token"):
            assert during[door].json()["error"] == "temporarily_unavailable", door

    await asyncio.to_thread(embedded.release, folder)
    await asyncio.to_thread(embedded.start, folder)
    after = await _every_door(running, editor.bearer)
    assert after["api"].status_code == 200
    assert after["mcp"].status_code == 200
    assert after["register"].status_code == 201
