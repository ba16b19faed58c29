"""The two revisions at the wire, by hand: 2026-07-28 requests carry their version and
capabilities in `_meta`, `server/discover` names it and the tasks extension, the
headers that revision removed (`Mcp-Session-Id`, `Last-Event-ID`) are ignored, and a version
that differs between header and body is a 400. (The SDK's client on each revision:
tests/mcp/test_asking.py.)"""

from __future__ import annotations

from typing import Any

import httpx

from tests.running import Running

MODERN = "2026-07-28"


def _modern(method: str, params: dict[str, Any] | None = None, version: str = MODERN) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "by-hand", "version": "0"},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**(params or {}), "_meta": meta},
    }


async def _post(corpus: Running, key: str, body: Any, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.post(
            corpus.mcp_url,
            json=body,
            headers={
                "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": body["method"],
                **headers,
            },
        )


async def test_discover_names_both_revisions_and_the_tasks_extension(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    reply = await _post(corpus, viewer.key, _modern("server/discover"))
    assert reply.status_code == 200, reply.text
    result = reply.json()["result"]
    assert MODERN in result["supportedVersions"]
    assert "io.modelcontextprotocol/tasks" in result["capabilities"]["extensions"]


async def test_session_and_resumption_headers_are_ignored_on_the_stateless_revision(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    reply = await _post(
        corpus,
        viewer.key,
        _modern("tools/list"),
        **{"Mcp-Session-Id": "made-up-session", "Last-Event-ID": "42"},
    )
    assert reply.status_code == 200, reply.text
    assert "mcp-session-id" not in reply.headers
    assert any(tool["name"] == "search_docs" for tool in reply.json()["result"]["tools"])


async def test_a_version_that_differs_between_header_and_body_is_a_400(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    body = _modern("tools/list", version="2025-11-25")
    reply = await _post(corpus, viewer.key, body)
    assert reply.status_code == 400, reply.text
