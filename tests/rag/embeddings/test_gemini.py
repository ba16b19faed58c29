"""The `gemini` provider: google-genai against a scripted Gemini API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import numpy as np
import pytest

from app.rag.embeddings import EmbeddingError
from app.rag.embeddings.gemini import GeminiEmbedder
from app.rag.embeddings.hash import hash_vectors
from tests.rag.embeddings.fakes import Reply, Request, ScriptedServer, SleepRecorder

KEY = "AIzaTest0123456789SECRET"
DIM = 768
PATH = "/v1/models/gemini-embedding-001:batchEmbedContents"


def batch_reply(request: Request, dim: int = DIM) -> Reply:
    """Like Gemini's truncated vectors, these are not unit length."""
    texts = [item["content"]["parts"][0]["text"] for item in request.body["requests"]]
    vectors = hash_vectors(texts, dim) * 0.7
    return Reply(200, {"embeddings": [{"values": v.tolist()} for v in vectors]})


@pytest.fixture
async def embedder(server: ScriptedServer, sleeps: SleepRecorder) -> AsyncIterator[GeminiEmbedder]:
    server.handler = batch_reply
    gemini = GeminiEmbedder(
        model="gemini-embedding-001", dim=DIM, api_key=KEY, base_url=server.url, sleep=sleeps
    )
    yield gemini
    await gemini.aclose()


async def test_passages_are_retrieval_documents_renormalised_to_unit_rows(
    embedder: GeminiEmbedder, server: ScriptedServer
) -> None:
    texts = ["roll back a deploy", "bake bread"]

    vectors = await embedder.embed_passages(texts)

    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", PATH)
    assert request.headers["x-goog-api-key"] == KEY
    assert [item["taskType"] for item in request.body["requests"]] == ["RETRIEVAL_DOCUMENT"] * 2
    assert {item["outputDimensionality"] for item in request.body["requests"]} == {DIM}
    assert {item["model"] for item in request.body["requests"]} == {"models/gemini-embedding-001"}


async def test_a_query_is_a_retrieval_query(
    embedder: GeminiEmbedder, server: ScriptedServer
) -> None:
    query = await embedder.embed_query("how do I roll back?")

    assert query.shape == (DIM,)
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, rtol=1e-6)
    assert server.requests[0].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


async def test_passages_go_in_batches_of_at_most_100(
    embedder: GeminiEmbedder, server: ScriptedServer
) -> None:
    texts = [f"passage {i}" for i in range(250)]

    vectors = await embedder.embed_passages(texts)

    assert [len(request.body["requests"]) for request in server.requests] == [100, 100, 50]
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)


async def test_a_503_is_retried(
    embedder: GeminiEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(
        Reply(503, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
    )

    query = await embedder.embed_query("retry me")

    assert query.shape == (DIM,)
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]


async def test_a_rate_limit_waits_as_long_as_gemini_asks(
    embedder: GeminiEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    error = {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}
    server.enqueue(Reply(429, {"error": error}, headers={"Retry-After": "4"}))

    query = await embedder.embed_query("retry me")

    assert query.shape == (DIM,)
    assert len(server.requests) == 2
    assert sleeps.delays == [4.0]


async def test_a_rejected_key_fails_at_once_without_the_key_in_the_message(
    embedder: GeminiEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    error = {"code": 400, "message": f"API key not valid: {KEY}", "status": "INVALID_ARGUMENT"}
    server.enqueue(Reply(400, {"error": error}))

    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed_query("who am I")

    assert raised.value.code == "unavailable"
    assert "400" in raised.value.message
    assert "SECRET" not in str(raised.value)
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_reply_of_another_dimension_is_an_error(
    embedder: GeminiEmbedder, server: ScriptedServer
) -> None:
    server.handler = lambda request: batch_reply(request, 3072)

    with pytest.raises(EmbeddingError, match="3072"):
        await embedder.embed_passages(["full size"])


async def test_a_key_is_required() -> None:
    with pytest.raises(EmbeddingError):
        GeminiEmbedder(model="gemini-embedding-001", dim=DIM, api_key=None)


async def test_another_dimension_is_asked_for(server: ScriptedServer) -> None:
    server.handler = lambda request: batch_reply(request, 256)
    embedder = GeminiEmbedder(
        model="gemini-embedding-001", dim=256, api_key=KEY, base_url=server.url
    )

    async with aclosing(embedder):
        query = await embedder.embed_query("short")

    assert query.shape == (256,)
    assert server.requests[0].body["requests"][0]["outputDimensionality"] == 256


async def test_a_dropped_connection_is_retried(
    embedder: GeminiEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(drop=True))

    vectors = await embedder.embed_passages(["retry me"])

    assert vectors.shape == (1, DIM)
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]
