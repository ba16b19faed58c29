"""Request bodies are bounded while they are read: a declared length over the route's limit is
refused before any of it is read, a streamed one is cut off when it passes the limit, and a
caller who may not upload is refused before the upload is read."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.rawhttp import send_head, stream_until_answered
from tests.running import Running, run_fresh_corpus

MB = 1024 * 1024
UPLOAD_MB = 20  # the default
BOUNDARY = "corpusboundary"


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_limits") as running:
        yield running


def _multipart_head(filename: str = "notes.md") -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{filename}"\r\nContent-Type: text/markdown\r\n\r\n# Notes\n\n'
    ).encode()


MULTIPART_TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()
MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


async def test_a_declared_oversized_json_body_is_refused_before_it_is_read(
    corpus: Running,
) -> None:
    answer = await send_head(
        corpus.url,
        "POST",
        "/api/auth/login",
        {"Content-Type": "application/json", "Content-Length": str(200 * MB)},
    )
    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"
    assert answer.headers["connection"] == "close"


async def test_a_streamed_json_body_is_cut_off_when_it_passes_the_limit(corpus: Running) -> None:
    cap = 16 * MB
    answer = await stream_until_answered(
        corpus.url,
        "POST",
        "/api/auth/login",
        {"Content-Type": "application/json"},
        first=b'{"email": "a@example.com", "password": "',
        filler=b"x" * 65536,
        last=b'"}',
        cap=cap,
    )
    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"
    # The server stopped reading at the limit (256 KB): the rest was never taken in.
    assert answer.sent < answer.total


async def test_a_viewers_upload_is_refused_before_its_body_is_read(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    # Under the upload limit, so that only the role can refuse it, and more than the sockets'
    # buffers hold, so that a server which does not read it keeps the sender waiting.
    cap = 16 * MB
    answer = await stream_until_answered(
        corpus.url,
        "POST",
        "/api/documents",
        {**viewer.bearer, **MULTIPART},
        first=_multipart_head(),
        filler=b"lorem ipsum " * 5000,
        last=MULTIPART_TAIL,
        cap=cap,
    )
    assert answer.status == 403
    assert answer.json()["error"]["code"] == "forbidden"
    assert answer.sent < answer.total


async def test_a_viewers_document_edit_is_refused_before_its_body_is_read(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    answer = await stream_until_answered(
        corpus.url,
        "PATCH",
        f"/api/documents/{uuid.uuid4()}",
        {**viewer.bearer, "Content-Type": "application/json"},
        first=b'{"content": "',
        filler=b"lorem ipsum " * 5000,
        last=b'"}',
        cap=16 * MB,
    )
    assert answer.status == 403
    assert answer.json()["error"]["code"] == "forbidden"
    assert answer.sent < answer.total


async def test_a_viewers_declared_upload_is_refused_before_its_body_is_read(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    headers = {**viewer.bearer, **MULTIPART, "Content-Length": str(UPLOAD_MB * MB)}
    answer = await send_head(corpus.url, "POST", "/api/documents", headers)
    assert answer.status == 403


async def test_an_editors_streamed_upload_over_the_limit_is_a_413(corpus: Running) -> None:
    editor = await corpus.account("editor")
    cap = 2 * UPLOAD_MB * MB
    answer = await stream_until_answered(
        corpus.url,
        "POST",
        "/api/documents",
        {**editor.bearer, **MULTIPART},
        first=_multipart_head(),
        filler=b"lorem ipsum " * 5000,
        last=MULTIPART_TAIL,
        cap=cap,
    )
    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"
    assert answer.sent < answer.total


async def test_an_editors_declared_upload_over_the_limit_is_a_413(corpus: Running) -> None:
    editor = await corpus.account("editor")
    headers = {**editor.bearer, **MULTIPART, "Content-Length": str(200 * MB)}
    answer = await send_head(corpus.url, "POST", "/api/documents", headers)
    assert answer.status == 413
    assert answer.json()["error"]["code"] == "payload_too_large"


async def test_requests_within_the_limits_are_served(corpus: Running) -> None:
    editor = await corpus.account("editor")
    document = b"# Notes\n\n" + b"lorem ipsum dolor sit amet\n" * 4_000
    async with httpx.AsyncClient(base_url=corpus.url, headers=editor.bearer, timeout=60) as http:
        uploaded = await http.post(
            "/api/documents", files={"file": ("notes.md", document, "text/markdown")}
        )
        pasted = await http.post(
            "/api/documents", json={"title": "Pasted", "content": "lorem " * (60 * 1024)}
        )
        search = await http.post("/api/search", json={"query": "lorem"})
        login = await http.post(
            "/api/auth/login", json={"email": "nobody@example.com", "password": "x" * 100}
        )
    assert uploaded.status_code == 201, uploaded.text
    # 360 KB of JSON: over the JSON routes' limit, well within a document route's.
    assert pasted.status_code == 201, pasted.text
    assert search.status_code == 200
    assert login.status_code == 401


async def test_mcp_admits_an_upload_of_the_largest_size_base64_encoded(corpus: Running) -> None:
    editor = await corpus.account("editor")
    document = b"x" * (UPLOAD_MB * MB)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "upload_document",
            "arguments": {
                "title": "Big notes",
                "filename": "notes.md",
                "content_base64": base64.b64encode(document).decode(),
            },
        },
    }
    headers = {
        **editor.bearer,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    async with httpx.AsyncClient(base_url=corpus.url, timeout=60) as http:
        reply = await http.post("/mcp", content=json.dumps(call), headers=headers)
    declared = {**headers, "Content-Length": str(2 * UPLOAD_MB * MB)}
    oversized = await send_head(corpus.url, "POST", "/mcp", declared)
    # Admitted and handed to the tool (which may refuse the text as too long: another limit).
    assert reply.status_code == 200, reply.text
    assert "result" in reply.json()
    assert oversized.status == 413
    assert oversized.json()["error"]["code"] == "payload_too_large"
