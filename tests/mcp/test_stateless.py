"""The agents' door keeps no state in the process: two `corpus serve` processes on one database
serve one MCP client whose requests alternate between them, as behind a load balancer without
session affinity."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from app.config import Settings
from app.db.engine import Database
from tests.accounts import make_account
from tests.support import (
    TEST_SECRET,
    child_env,
    free_port,
    migrated_database,
    start_corpus,
    wait_until_ready,
)

STOP_TIMEOUT_S = 20


@dataclass
class Served:
    port: int
    call: str  # the JSON-RPC method, or the tool's name for tools/call
    status: int


@dataclass
class Alternating(httpx2.AsyncBaseTransport):
    """Sends each request to the next server in turn, and notes who served what."""

    ports: list[int]
    log: list[Served] = field(default_factory=list)
    inner: httpx2.AsyncHTTPTransport = field(default_factory=httpx2.AsyncHTTPTransport)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self.ports[len(self.log) % len(self.ports)]
        request.url = request.url.copy_with(port=port)
        request.headers["Host"] = f"127.0.0.1:{port}"
        message: dict[str, Any] = json.loads(request.content) if request.content else {}
        call = str(message.get("method", request.method))
        if call == "tools/call":
            call = str(message["params"]["name"])
        response = await self.inner.handle_async_request(request)
        self.log.append(Served(port, call, response.status_code))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def served(self, call: str) -> list[int]:
        return [s.port for s in self.log if s.call == call]


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] | None = result.structured_content
    assert data is not None
    return data


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_two_server_processes_on_one_database_serve_one_client_alternately_without_errors(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    database_url = await migrated_database(server_url, data_dir, "corpus_mcp")
    db = Database(database_url)
    try:
        async with db.write() as conn:
            agent = await make_account(conn, "editor", kind="agent")
    finally:
        await db.dispose()

    ports = [free_port(), free_port()]
    # One public URL for both, as behind one load balancer: API keys and tokens are bound to
    # the resource `{CORPUS_PUBLIC_URL}/mcp`, and both processes must agree on it (and on the
    # secret key).
    public_url = f"http://127.0.0.1:{ports[0]}"
    env = child_env(
        DATABASE_URL=database_url,
        CORPUS_DATA_DIR=str(tmp_path / "var"),
        EMBEDDINGS_PROVIDER="hash",
        SECRET_KEY=TEST_SECRET,
        CORPUS_PUBLIC_URL=public_url,
        CORPUS_ALLOWED_HOSTS=",".join(f"127.0.0.1:{port}" for port in ports),
    )
    logs = [tmp_path / f"serve-{port}.log" for port in ports]
    processes = [
        start_corpus(["serve", "--port", str(port)], env, log)
        for port, log in zip(ports, logs, strict=True)
    ]
    try:
        await asyncio.gather(
            *(
                asyncio.to_thread(wait_until_ready, f"http://127.0.0.1:{port}/readyz", p, log)
                for port, p, log in zip(ports, processes, logs, strict=True)
            )
        )

        transport = Alternating(ports)
        word = f"zq{uuid.uuid4().hex[:12]}"
        content = f"# Failover {word}\n\nPromote the {word} replica when the primary is down.\n"
        async with (
            httpx2.AsyncClient(transport=transport, headers=agent.bearer, timeout=30) as http,
            Client(streamable_http_client(f"{public_url}/mcp", http_client=http)) as client,
        ):
            assert client.server_info is not None
            assert client.server_info.name == "Corpus"  # the session is set up
            me = _ok(await client.call_tool("whoami", {}))
            assert me["email"] == agent.user.email
            created = _ok(
                await client.call_tool(
                    "upload_document", {"title": f"Failover {word}", "content": content}
                )
            )
            document = {"document_id": created["id"]}
            read = _ok(await client.call_tool("read_document", document))
            assert read["text"] == content
            hits = _ok(await client.call_tool("search_docs", {"query": f"promote the {word}"}))
            assert hits["hits"][0]["document_id"] == created["id"]
            listed = _ok(await client.call_tool("list_documents", {"q": word}))
            assert [d["id"] for d in listed["items"]] == [created["id"]]
            answer = _ok(await client.call_tool("ask_docs", {"question": f"{word} failover?"}))
            assert answer["citations"][0]["document_id"] == created["id"]
            assert _ok(await client.call_tool("delete_document", document)) == {
                "deleted": created["id"]
            }
            # Deleted on one server, gone on the other.
            gone = await client.call_tool("read_document", document)
            assert gone.is_error is True
            [reply] = gone.content
            assert isinstance(reply, TextContent)
            assert reply.text.partition(": ")[2].startswith("not_found:")
    finally:
        for process in processes:
            _stop(process)

    assert [s for s in transport.log if s.status >= 400] == []
    assert {s.port for s in transport.log} == set(ports)
    # What one server wrote, the other read: no call depended on the server before it.
    [uploaded_on] = transport.served("upload_document")
    [deleted_on] = transport.served("delete_document")
    first_read, last_read = transport.served("read_document")
    assert (first_read, last_read) == (
        next(p for p in ports if p != uploaded_on),
        next(p for p in ports if p != deleted_on),
    )
