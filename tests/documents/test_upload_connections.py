"""An upload holds no database connection while its file converts: files waiting on the
conversion workers cannot take the pool from everyone else."""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.types import TextContent

from app.documents.convert import Converted
from tests.documents import hostile
from tests.mcp.conftest import mcp_client
from tests.running import run_corpus
from tests.support import migrated_database


async def test_uploads_waiting_on_conversion_leave_the_pool_to_others(
    server_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database_url = await migrated_database(server_url, data_dir, "corpus_upload_pool")
    # Two connections in all, one conversion at a time, and files that take a while: the
    # uploads below keep the worker busy for about two deadlines.
    async with run_corpus(
        data_dir,
        database_url,
        db_max_connections=2,
        convert_workers=1,
        convert_timeout_s=1.0,
    ) as corpus:
        editor = await corpus.account("editor")
        viewer = await corpus.account("viewer")
        slow = hostile.slow_pdf(pages=100, per_page=20_000)
        finished: list[float] = []
        # A spy on the app's converter, to know when the uploads have reached it.
        converter = corpus.app.state.resources.converter
        to_markdown = converter.to_markdown
        calls = 0
        two_converting = asyncio.Event()

        async def counted(*args: Any, **kwargs: Any) -> Converted:
            nonlocal calls
            calls += 1
            if calls >= 2:
                two_converting.set()
            converted: Converted = await to_markdown(*args, **kwargs)
            return converted

        monkeypatch.setattr(converter, "to_markdown", counted)

        async def upload_over_http(name: str) -> None:
            async with httpx.AsyncClient(
                base_url=corpus.url, headers=editor.bearer, timeout=60
            ) as client:
                reply = await client.post("/api/documents", files={"file": (name, slow)})
            assert reply.status_code == 413, reply.text  # past the (short) deadline
            finished.append(time.monotonic())

        async def upload_over_mcp() -> None:
            async with mcp_client(corpus.mcp_url, editor.key) as client:
                result = await client.call_tool(
                    "upload_document",
                    {
                        "title": "Slow",
                        "content_base64": base64.b64encode(slow).decode(),
                        "filename": "slow.pdf",
                    },
                )
            assert result.is_error
            assert isinstance(result.content[0], TextContent)
            assert "payload_too_large" in result.content[0].text
            finished.append(time.monotonic())

        uploads = [
            asyncio.ensure_future(upload_over_http("a.pdf")),
            asyncio.ensure_future(upload_over_http("b.pdf")),
            asyncio.ensure_future(upload_over_mcp()),
        ]
        async with httpx.AsyncClient(
            base_url=corpus.url, headers=viewer.bearer, timeout=60
        ) as client:
            # Two files are with the converter (one converting, one queued for the worker).
            await asyncio.wait_for(two_converting.wait(), timeout=30)
            for _ in range(3):
                listed = await client.get("/api/documents")
                assert listed.status_code == 200
            listed_at = time.monotonic()
        await asyncio.gather(*uploads)
        # Every upload was still waiting on the worker when the lists were served.
        assert listed_at < min(finished)
