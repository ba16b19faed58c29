"""Hostile uploads over real HTTP, over MCP and through `corpus ingest`: each is refused with
the bound it broke, within seconds, in a worker process, while the service keeps answering."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import psutil
import pytest
from mcp.types import TextContent

from app.documents.worker import IN_PROCESS_MAX_BYTES, Converter
from app.errors import ValidationFailed
from tests.documents import hostile
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_fresh_corpus
from tests.support import PROJECT_ROOT, child_env, make_settings

# (file name, bytes, status, code, the setting of the bound that the message names)
BOMBS: dict[str, Callable[[], tuple[str, bytes, int, str, str]]] = {
    "pdf_pages_sharing_an_inflating_stream": lambda: (
        "shared.pdf",
        hostile.shared_stream_pdf(),
        413,
        "payload_too_large",
        "CORPUS_CONVERT_MAX_INFLATED_MB",
    ),
    "pdf_with_one_huge_stream": lambda: (
        "huge.pdf",
        hostile.inflating_stream_pdf(),
        413,
        "payload_too_large",
        "CORPUS_CONVERT_MAX_INFLATED_MB",
    ),
    "pdf_with_more_pages_than_the_limit": lambda: (
        "pages.pdf",
        hostile.many_pages_pdf(2001),
        413,
        "payload_too_large",
        "CORPUS_CONVERT_MAX_PDF_PAGES",
    ),
    "html_table_of_wide_spans": lambda: (
        "spans.html",
        hostile.colspan_html(),
        413,
        "payload_too_large",
        "CORPUS_MAX_DOCUMENT_CHARS",
    ),
    "html_nested_a_thousand_deep": lambda: (
        "deep.html",
        hostile.deep_html(),
        422,
        "validation_error",
        "CORPUS_CONVERT_MAX_HTML_DEPTH",
    ),
}
# Generous: a refusal comes from a bound checked early, not from the deadline (20 s).
REFUSED_WITHIN_S = 10.0


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_bounds") as running:
        yield running


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _document_count(corpus: Running, key: str) -> int:
    async with httpx.AsyncClient(base_url=corpus.url, headers=_bearer(key)) as client:
        response = await client.get("/api/documents", params={"limit": 200})
    assert response.status_code == 200
    return len(response.json()["items"])


async def _answers_meanwhile(corpus: Running, work: Awaitable[object]) -> None:
    """While `work` runs, /healthz answers within a second and another caller's list of
    documents completes normally."""
    task = asyncio.ensure_future(work)
    other = await corpus.account("viewer")
    async with httpx.AsyncClient(base_url=corpus.url, headers=_bearer(other.key)) as client:
        for _ in range(3):
            started = time.monotonic()
            health = await asyncio.wait_for(client.get("/healthz"), timeout=5)
            assert health.status_code == 200
            assert time.monotonic() - started < 1.0
        started = time.monotonic()
        listed = await asyncio.wait_for(client.get("/api/documents"), timeout=10)
        assert listed.status_code == 200
        assert time.monotonic() - started < 5.0
    await task


@pytest.mark.parametrize("bomb", list(BOMBS))
async def test_a_hostile_upload_is_refused_quickly_naming_its_bound_while_the_service_answers(
    corpus: Running, bomb: str
) -> None:
    filename, data, status, code, bound = BOMBS[bomb]()
    editor = await corpus.account("editor")
    before = await _document_count(corpus, editor.key)
    outcome: dict[str, object] = {}

    async def upload() -> None:
        started = time.monotonic()
        async with httpx.AsyncClient(
            base_url=corpus.url, headers=_bearer(editor.key), timeout=120
        ) as client:
            response = await client.post("/api/documents", files={"file": (filename, data)})
        outcome.update(response=response, elapsed=time.monotonic() - started)

    await _answers_meanwhile(corpus, upload())
    response = outcome["response"]
    assert isinstance(response, httpx.Response)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert bound in response.json()["error"]["message"]
    assert isinstance(outcome["elapsed"], float)
    assert outcome["elapsed"] < REFUSED_WITHIN_S
    assert await _document_count(corpus, editor.key) == before


@pytest.mark.parametrize("bomb", list(BOMBS))
async def test_a_hostile_file_sent_over_mcp_is_refused_naming_its_bound(
    corpus: Running, bomb: str
) -> None:
    filename, data, _status, code, bound = BOMBS[bomb]()
    editor = await corpus.account("editor", kind="agent")
    before = await _document_count(corpus, editor.key)
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        result = await client.call_tool(
            "upload_document",
            {
                "title": "Hostile",
                "content_base64": base64.b64encode(data).decode(),
                "filename": filename,
            },
        )
    assert result.is_error is True
    [content] = result.content
    assert isinstance(content, TextContent)
    assert content.text.partition(": ")[2].split(":", 1)[0] == code
    assert bound in content.text
    assert await _document_count(corpus, editor.key) == before


def _worker_pids() -> set[int]:
    """The conversion workers of this process (the test serves Corpus in its own loop)."""
    return {
        child.pid
        for child in psutil.Process().children(recursive=True)
        if "app.documents.worker" in " ".join(child.cmdline())
    }


async def test_a_conversion_that_overruns_the_deadline_is_refused_and_its_worker_killed(
    server_url: str, data_dir: Path
) -> None:
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_deadline", convert_timeout_s=0.5
    ) as corpus:
        editor = await corpus.account("editor")
        async with httpx.AsyncClient(
            base_url=corpus.url, headers=_bearer(editor.key), timeout=60
        ) as client:
            # An HTML file: Markdown and plain text are converted without a worker.
            warm = await client.post(
                "/api/documents", files={"file": ("a.html", b"<h1>A</h1><p>Text.</p>")}
            )
            assert warm.status_code == 201, warm.text
            workers = _worker_pids()
            assert workers
            # About two seconds of pypdf on this machine, within every bound but the deadline.
            slow = hostile.slow_pdf(pages=100, per_page=20_000)
            started = time.monotonic()
            refused = await client.post("/api/documents", files={"file": ("slow.pdf", slow)})
            assert refused.status_code == 413
            assert refused.json()["error"]["code"] == "payload_too_large"
            assert time.monotonic() - started < 5.0
            assert not any(psutil.pid_exists(pid) for pid in workers - _worker_pids())
            assert workers - _worker_pids()
            after = await client.post("/api/documents", files={"file": ("b.md", b"# B\n\nMore.")})
            assert after.status_code == 201, after.text
            assert await _document_count(corpus, editor.key) == 2


async def test_a_conversion_over_the_memory_cap_is_refused_and_the_next_file_converts(
    server_url: str, data_dir: Path
) -> None:
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_memory",
        convert_memory_mb=256,
        max_document_chars=20_000_000,
    ) as corpus:
        editor = await corpus.account("editor")
        async with httpx.AsyncClient(
            base_url=corpus.url, headers=_bearer(editor.key), timeout=60
        ) as client:
            # 18 MB of one-character lines: within the upload and length limits, but the lines
            # take more than 256 MB as Python strings.
            lines = b"a\n" * 9_000_000
            refused = await client.post("/api/documents", files={"file": ("lines.txt", lines)})
            assert refused.status_code == 413
            assert refused.json()["error"]["code"] == "payload_too_large"
            after = await client.post("/api/documents", files={"file": ("b.md", b"# B\n\nMore.")})
            assert after.status_code == 201, after.text
            assert await _document_count(corpus, editor.key) == 1


def test_ingest_reports_a_hostile_file_as_failed_and_goes_on_with_the_folder(
    tmp_path: Path, data_dir: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a_deep.html").write_bytes(hostile.deep_html())
    (folder / "b_shared.pdf").write_bytes(hostile.shared_stream_pdf())
    (folder / "c_good.md").write_text("# Good\n\nA readable file about the bounds.\n")
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "ingest", str(folder), "--workspace", "bounds"],
        cwd=PROJECT_ROOT,
        env=child_env(CORPUS_DATA_DIR=str(data_dir), EMBEDDINGS_PROVIDER="hash"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "3 files: 1 added, 0 updated, 0 unchanged, 2 failed" in result.stdout
    assert "a_deep.html" in result.stderr
    assert "b_shared.pdf" in result.stderr


async def test_a_small_text_file_converts_without_a_worker_and_a_large_one_in_one(
    tmp_path: Path,
) -> None:
    converter = Converter(make_settings(tmp_path))
    try:
        before = _worker_pids()
        small = await converter.to_markdown(
            b"# Title\r\n\r\nBody   \r\n", filename="note.md", content_type=None
        )
        assert (small.markdown, small.title) == ("# Title\n\nBody", "Title")
        assert _worker_pids() == before
        # Refused alike in this process: the same error a worker would send back.
        with pytest.raises(ValidationFailed, match="NUL bytes"):
            await converter.to_markdown(b"a\x00b", filename="bad.txt", content_type=None)
        assert _worker_pids() == before
        large = b"word " * (IN_PROCESS_MAX_BYTES // 5 + 1)
        converted = await converter.to_markdown(large, filename="big.txt", content_type=None)
        assert converted.markdown == large.decode().strip()
        assert _worker_pids() - before
    finally:
        await converter.aclose()
