"""The provider wiring over the wire: Corpus configured for each provider (ANSWER_PROVIDER and
a base URL) talks to a scripted model server on 127.0.0.1, streamed tokens and tool calls
included, and a refused key becomes a clear `error` event."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from tests.agents.conftest import World
from tests.agents.providers import ScriptedServer, Turn
from tests.agents.test_ask_api import _events
from tests.running import Running, run_corpus
from tests.support import listening_socket, serving

PROVIDERS: dict[str, dict[str, str]] = {
    "openai": {"answer_provider": "openai", "openai_base_url": "{url}/v1"},
    "anthropic": {
        "answer_provider": "anthropic",
        "anthropic_base_url": "{url}",
        "anthropic_api_key": "sk-ant-test",
    },
    "gemini": {
        "answer_provider": "gemini",
        "gemini_base_url": "{url}",
        "google_api_key": "gemini-test-key",
    },
}


@asynccontextmanager
async def _served(
    world: World, provider: str, server: ScriptedServer, **settings: Any
) -> AsyncIterator[Running]:
    sock, url = listening_socket()
    overrides: dict[str, Any] = {k: v.format(url=url) for k, v in PROVIDERS[provider].items()}
    overrides.update(settings)
    async with (
        serving(server.app(), sock, lifespan="off"),
        run_corpus(
            world.settings.data_dir,
            world.settings.database_url,
            answer_model="scripted-model",
            **overrides,
        ) as corpus,
    ):
        yield corpus


async def _ask(corpus: Running, world: World, question: str) -> list[tuple[str, Any]]:
    async with (
        httpx.AsyncClient(base_url=corpus.url, headers=world.viewer.bearer, timeout=30) as client,
        client.stream("POST", "/api/ask", json={"question": question, "mode": "fast"}) as response,
    ):
        assert response.status_code == 200
        return [event async for event in _events(response)]


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_each_provider_streams_tool_calls_and_tokens_over_the_wire(
    world: World, provider: str
) -> None:
    server = ScriptedServer(
        [
            Turn(tool="search_corpus", args={"query": "roll back a deploy"}),
            Turn(text="Run make rollback from the release branch [1]."),
        ]
    )
    async with _served(world, provider, server) as corpus:
        events = await _ask(corpus, world, "How do I roll back a deploy?")
    names = [name for name, _ in events]
    assert names[0] == "mode"
    assert names[-1] == "done", events[-1]
    assert [d["label"] for n, d in events if n == "step"] == ['search: "roll back a deploy"']
    tokens = [d["text"] for n, d in events if n == "token"]
    assert len(tokens) > 1
    done = events[-1][1]
    assert "".join(tokens) == done["answer"] == "Run make rollback from the release branch [1]."
    assert [c["title"] for c in done["citations"]] == ["Deploy rollback"]
    # The second request carried the tool's result back to the model.
    assert len(server.requests) == 2
    assert "make rollback" in str(server.requests[1])


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_refused_key_is_a_clear_error_event_not_a_hang(world: World, provider: str) -> None:
    server = ScriptedServer([Turn(text="unused")], refuse=401)
    question = f"How do I roll back deploy {provider}?"
    async with _served(world, provider, server) as corpus:
        events = await _ask(corpus, world, question)
        async with httpx.AsyncClient(base_url=corpus.url, headers=world.viewer.bearer) as client:
            chats = (await client.get("/api/chats")).json()["items"]
    assert [name for name, _ in events] == ["mode", "error"]
    assert events[-1][1]["code"] == "model_unauthorized"
    # A chat exists once it has an answer: a failed run leaves none behind.
    assert question not in [chat["title"] for chat in chats]


async def test_a_provider_that_hangs_is_a_timeout_error_event(world: World) -> None:
    server = ScriptedServer([Turn(text="unused")], hang=True)
    async with _served(world, "openai", server, answer_timeout_s=0.3) as corpus:
        events = await _ask(corpus, world, "How do I roll back a deploy?")
        server.released.set()
    assert [name for name, _ in events] == ["mode", "error"]
    assert events[-1][1]["code"] == "model_timeout"
