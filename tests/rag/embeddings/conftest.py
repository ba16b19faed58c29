"""Fixtures of the embedding tests: a scripted provider API on 127.0.0.1, a recording sleep."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.rag.embeddings.fakes import ScriptedServer, SleepRecorder


@pytest.fixture
async def server() -> AsyncIterator[ScriptedServer]:
    """A scripted HTTP server; set its `handler` or `enqueue` replies."""
    scripted = ScriptedServer()
    await scripted.start()
    yield scripted
    await scripted.close()


@pytest.fixture
def sleeps() -> SleepRecorder:
    """A recording stand-in for asyncio.sleep."""
    return SleepRecorder()
