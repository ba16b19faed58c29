"""The log cannot be forged: a request's path, however it is encoded, stays on its own access
line, with newlines, terminal escapes and NULs escaped; so do other messages' values."""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.rawhttp import send_head
from tests.running import Running, run_fresh_corpus
from tests.support import captured_log


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_log") as running:
        yield running


@pytest.fixture
def log() -> Iterator[io.StringIO]:
    """What the server writes to its log, through the handler `corpus serve` sets up."""
    with captured_log() as out:
        yield out


FORGED = "2026-12-03 10:00:00,000 INFO corpus.access [x] POST /api/auth/login 200 1.0ms"


async def test_a_path_cannot_forge_an_access_log_line(corpus: Running, log: io.StringIO) -> None:
    target = "/notes%0a" + FORGED.replace(" ", "%20") + "%1b[2J%00end"
    answer = await send_head(corpus.url, "GET", target, {})
    assert answer.status == 404
    lines = [line for line in log.getvalue().splitlines() if "corpus.access" in line]
    [line] = [line for line in lines if "/notes" in line]
    assert "POST /api/auth/login 200" not in log.getvalue().replace(line, "")
    assert not any(char in line for char in "\n\r\x1b\x00")
    assert "/notes%0A2026-12-03%2010" in line
    assert "%1B%5B2J%00end" in line


def test_control_characters_in_any_log_message_are_escaped(log: io.StringIO) -> None:
    logging.getLogger("app.routers.oidc").warning("sign-in failed: %s", "bad\nINFO fake\x1b[31m")
    [line] = log.getvalue().splitlines()
    assert line.endswith("sign-in failed: bad\\nINFO fake\\x1b[31m")
