"""The doors' smaller edges: unknown API paths are a JSON 404 whatever the method, numbers and
flags are what JSON says they are, and a search's reported time says nothing about documents the
caller cannot see. (The web app's page and its protections: tests/test_spa.py, and the built
page under its policy in the browser run, frontend/e2e.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.accounts import Account
from tests.running import Running, run_fresh_corpus


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_doors") as running:
        yield running


@pytest.fixture(scope="module")
async def admin(corpus: Running) -> Account:
    return await corpus.account("admin")


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/api/nothing", "/api/documents/a/b/c", "/v1/nothing"])
async def test_an_unknown_api_path_is_a_json_404_with_any_method(
    corpus: Running, admin: Account, method: str, path: str
) -> None:
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        reply = await http.request(method, path, json={} if method != "GET" else None)
    assert reply.status_code == 404
    if method != "HEAD":
        assert reply.json()["error"]["code"] == "not_found"


async def test_a_known_path_with_a_wrong_method_is_still_a_405(corpus: Running) -> None:
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        reply = await http.put("/api/documents", json={})
    assert reply.status_code == 405
    assert reply.headers["allow"] == "GET, POST"


@pytest.mark.parametrize("top_k", ["10", True, 10.0])
async def test_a_number_sent_as_another_type_is_refused(
    corpus: Running, admin: Account, top_k: Any
) -> None:
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        reply = await http.post("/api/search", json={"query": "deploy", "top_k": top_k})
        fine = await http.post("/api/search", json={"query": "deploy", "top_k": 10})
    assert reply.status_code == 422
    assert reply.json()["error"]["code"] == "validation_error"
    assert fine.status_code == 200


@pytest.mark.parametrize("active", ["false", 0])
async def test_a_flag_sent_as_another_type_is_refused(
    corpus: Running, admin: Account, active: Any
) -> None:
    viewer = await corpus.account("viewer")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        reply = await http.patch(f"/api/people/{viewer.user.id}", json={"active": active})
        after = await http.get("/api/people?limit=200")
    assert reply.status_code == 422
    [person] = [p for p in after.json()["items"] if p["id"] == str(viewer.user.id)]
    assert person["active"] is True


MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


@pytest.mark.parametrize("top_k", ["10", True])
async def test_an_mcp_tool_refuses_a_number_sent_as_another_type(
    corpus: Running, admin: Account, top_k: Any
) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_docs", "arguments": {"query": "deploy", "top_k": top_k}},
    }
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        reply = await http.post(
            "/mcp", content=json.dumps(call), headers={**MCP_HEADERS, **admin.bearer}
        )
    assert reply.status_code == 200
    assert reply.json()["result"]["isError"] is True


async def test_a_searchs_time_does_not_tell_what_others_private_documents_hold(
    corpus: Running, admin: Account
) -> None:
    owner = await corpus.account("editor")
    async with httpx.AsyncClient(base_url=corpus.url, timeout=60) as http:
        for n in range(20):
            made = await http.post(
                "/api/documents",
                headers=owner.bearer,
                json={
                    "title": f"Private {n}",
                    "content": f"zanzibarite {n} " * 200,
                    "visibility": "private",
                },
            )
            assert made.status_code == 201
        times = {}
        for word in ("zanzibarite", "quixotical"):
            reply = await http.post(
                "/api/search",
                headers=admin.bearer,
                json={"query": word, "mode": "keyword"},
            )
            assert reply.status_code == 200
            assert reply.json()["hits"] == []
            times[word] = reply.json()["took_ms"]
    assert times["zanzibarite"] == times["quixotical"]
