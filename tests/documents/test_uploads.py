"""Uploads a newcomer can trust: a file sent again is recognised (unchanged, or with `replace`
the same document's new version), and a browser that goes away mid-upload leaves nothing
half-written: each file is one transaction, written whole or not at all."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents
from app.documents.convert import Converted
from app.observe.metrics import REGISTRY
from tests.accounts import make_account
from tests.running import run_corpus
from tests.support import eventually, migrated_database


async def _send(
    client: httpx.AsyncClient, headers: dict[str, str], name: str, content: str, **data: str
) -> httpx.Response:
    return await client.post(
        "/api/documents",
        files={"file": (name, content.encode(), "text/markdown")},
        data=data,
        headers=headers,
    )


async def test_a_file_sent_again_is_unchanged_or_with_replace_the_same_documents_new_version(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    name = f"handbook-{uuid.uuid4().hex[:6]}.md"
    first = await _send(client, editor.bearer, name, "# Handbook\n\nDesks open at nine.\n")
    assert first.status_code == 201
    document = first.json()
    assert (document["unchanged"], document["replaced"]) == (False, False)

    again = await _send(
        client, editor.bearer, name, "# Handbook\n\nDesks open at nine.\n", replace="true"
    )
    assert again.status_code == 200
    assert again.json()["id"] == document["id"]
    assert (again.json()["unchanged"], again.json()["replaced"]) == (True, False)

    changed = await _send(
        client, editor.bearer, name, "# Handbook\n\nDesks open at ten.\n", replace="true"
    )
    assert changed.status_code == 200
    assert changed.json()["id"] == document["id"]
    assert (changed.json()["replaced"], changed.json()["version"]) == (True, 2)
    content = (await client.get(f"/api/documents/{document['id']}", headers=editor.bearer)).json()
    assert "ten" in content["content"]

    # Without `replace`, changed content of the same file is a document of its own.
    beside = await _send(client, editor.bearer, name, "# Handbook\n\nDesks open at noon.\n")
    assert beside.status_code == 201
    assert beside.json()["id"] != document["id"]
    count = await conn.scalar(
        select(func.count()).select_from(documents).where(documents.c.source == name)
    )
    assert count == 2

    refused = await _send(client, editor.bearer, name, "x", replace="perhaps")
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "validation_error"


def _finished_uploads() -> float:
    """How many `POST /api/documents` this process's servers have finished, whatever their
    status (the access line's histogram counts each request as it ends)."""
    total = 0.0
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            labels = sample.labels
            if (
                sample.name == "corpus_http_request_duration_seconds_count"
                and labels.get("method") == "POST"
                and labels.get("route") == "/api/documents"
            ):
                total += sample.value
    return total


def _multipart(name: str, content: bytes) -> tuple[str, bytes]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return f"multipart/form-data; boundary={boundary}", body


async def _open_upload(
    url: str, key: str, name: str, content: bytes
) -> tuple[asyncio.StreamWriter, bytes]:
    """A connection with an upload's head sent; the body is the caller's to send (or not)."""
    content_type, body = _multipart(name, content)
    netloc = urlsplit(url).netloc
    host, port = netloc.rsplit(":", 1)
    _reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        f"POST /api/documents HTTP/1.1\r\nHost: {netloc}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode())
    return writer, body


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def test_a_browser_gone_mid_upload_leaves_nothing_half_written(
    server_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database_url = await migrated_database(server_url, data_dir, "corpus_upload_gone")
    async with run_corpus(data_dir, database_url) as corpus:
        editor = await corpus.account("editor")
        text = "# Gone\n\n" + "Mid-upload paragraphs about lighthouses. " * 4000
        content = text.encode()

        # Gone while the file is on its way: the request ends, and nothing was written.
        before = _finished_uploads()
        writer, body = await _open_upload(corpus.url, editor.key, "half.md", content)
        writer.write(body[: len(body) // 2])
        await writer.drain()
        await _close(writer)
        await eventually(
            lambda: _done(before), "the server to end the request whose client went away"
        )

        # Gone after the whole file was sent, while it converts: the server finishes the file
        # it has, in one transaction, and the document is whole.
        converter = corpus.app.state.resources.converter
        to_markdown = converter.to_markdown
        converting = asyncio.Event()
        release = asyncio.Event()

        async def held(*args: Any, **kwargs: Any) -> Converted:
            converting.set()
            await release.wait()
            converted: Converted = await to_markdown(*args, **kwargs)
            return converted

        monkeypatch.setattr(converter, "to_markdown", held)
        before = _finished_uploads()
        writer, body = await _open_upload(corpus.url, editor.key, "whole.md", content)
        writer.write(body)
        await writer.drain()
        await asyncio.wait_for(converting.wait(), timeout=30)
        await _close(writer)
        release.set()
        await eventually(lambda: _done(before), "the server to finish the file it received")

        async with corpus.db.read() as conn:
            rows = (
                await conn.execute(
                    select(
                        documents.c.source,
                        select(func.count())
                        .where(chunks.c.document_id == documents.c.id)
                        .scalar_subquery()
                        .label("chunks"),
                    )
                )
            ).all()
        assert [row.source for row in rows] == ["whole.md"]
        assert rows[0].chunks > 1


async def _done(before: float) -> bool:
    return _finished_uploads() > before
