"""The `openai` provider against a scripted OpenAI-style API (also Ollama's and vLLM's)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import numpy as np
import pytest

from app.rag.embeddings import EmbeddingError
from app.rag.embeddings.hash import hash_vectors
from app.rag.embeddings.openai import OpenAIEmbedder
from tests.rag.embeddings.fakes import Reply, Request, ScriptedServer, SleepRecorder

KEY = "sk-test-0123456789abcdefSECRET"
DIM = 1536


def embeddings_reply(request: Request, dim: int = DIM) -> Reply:
    """Vectors of length 3 (so normalisation shows), listed in reverse `index` order."""
    vectors = hash_vectors(request.body["input"], dim) * 3
    data = [
        {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)
    ]
    return Reply(200, {"object": "list", "data": data[::-1], "model": request.body["model"]})


@pytest.fixture
async def embedder(server: ScriptedServer, sleeps: SleepRecorder) -> AsyncIterator[OpenAIEmbedder]:
    server.handler = embeddings_reply
    openai = OpenAIEmbedder(
        model="text-embedding-3-small", dim=DIM, api_key=KEY, base_url=server.url, sleep=sleeps
    )
    yield openai
    await openai.aclose()


async def test_passages_are_posted_with_the_key_and_come_back_as_unit_rows_in_order(
    embedder: OpenAIEmbedder, server: ScriptedServer
) -> None:
    texts = ["roll back a deploy", "bake bread", "rotate a key"]

    vectors = await embedder.embed_passages(texts)

    assert vectors.shape == (3, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/embeddings")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"model": "text-embedding-3-small", "input": texts}


async def test_query_is_one_unit_vector(embedder: OpenAIEmbedder) -> None:
    query = await embedder.embed_query("how do I roll back?")

    assert query.shape == (DIM,)
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, rtol=1e-6)


async def test_passages_are_sent_in_batches_and_kept_in_order(server: ScriptedServer) -> None:
    server.handler = embeddings_reply
    texts = [f"passage number {i}" for i in range(5)]
    embedder = OpenAIEmbedder(
        model="text-embedding-3-small", dim=DIM, api_key=KEY, base_url=server.url, batch_size=2
    )

    async with aclosing(embedder):
        vectors = await embedder.embed_passages(texts)

    assert [request.body["input"] for request in server.requests] == [
        texts[0:2],
        texts[2:4],
        texts[4:5],
    ]
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)


async def test_no_passages_make_no_request(
    embedder: OpenAIEmbedder, server: ScriptedServer
) -> None:
    vectors = await embedder.embed_passages([])

    assert vectors.shape == (0, DIM)
    assert server.requests == []


async def test_a_shortened_dimension_is_asked_for(server: ScriptedServer) -> None:
    server.handler = lambda request: embeddings_reply(request, 512)
    embedder = OpenAIEmbedder(
        model="text-embedding-3-small", dim=512, api_key=KEY, base_url=server.url
    )

    async with aclosing(embedder):
        vectors = await embedder.embed_passages(["short"])

    assert vectors.shape == (1, 512)
    assert server.requests[0].body["dimensions"] == 512


async def test_models_of_other_servers_get_no_dimensions_field(server: ScriptedServer) -> None:
    server.handler = lambda request: embeddings_reply(request, 768)
    embedder = OpenAIEmbedder(model="nomic-embed-text", dim=768, api_key=None, base_url=server.url)

    async with aclosing(embedder):
        await embedder.embed_query("local server")

    [request] = server.requests
    assert "dimensions" not in request.body
    assert "authorization" not in request.headers


async def test_a_key_is_required_without_a_base_url() -> None:
    with pytest.raises(EmbeddingError):
        OpenAIEmbedder(model="text-embedding-3-small", dim=DIM, api_key=None)


async def test_a_503_is_retried_after_a_backoff(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(503, {"error": {"message": "overloaded"}}))

    query = await embedder.embed_query("retry me")

    assert query.shape == (DIM,)
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]


async def test_rate_limits_and_dropped_connections_are_retried(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(429, {"error": {"message": "slow down"}}), Reply(drop=True))

    query = await embedder.embed_query("retry me")

    assert query.shape == (DIM,)
    assert len(server.requests) == 3
    assert sleeps.delays == [0.5, 2.0]


async def test_a_rate_limit_waits_as_long_as_the_provider_asks(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "3"}))

    query = await embedder.embed_query("retry me")

    assert query.shape == (DIM,)
    assert len(server.requests) == 2
    assert sleeps.delays == [3.0]


async def test_a_rate_limit_asking_for_a_long_pause_fails_at_once(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(429, {"error": {"message": "quota"}}, headers={"Retry-After": "120"}))

    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed_query("retry me")

    assert "asked to retry after 120 s" in raised.value.message
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_three_failures_give_an_embedding_error(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(*[Reply(500, {"error": {"message": "boom"}})] * 3)

    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed_query("never")

    assert raised.value.code == "unavailable"
    assert raised.value.status == 503
    assert len(server.requests) == 3


async def test_a_rejected_key_fails_at_once_without_the_key_in_the_message(
    embedder: OpenAIEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(
        Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "x"}})
    )

    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed_query("who am I")

    assert raised.value.code == "unavailable"
    assert "401" in raised.value.message
    assert KEY not in str(raised.value)
    assert "SECRET" not in str(raised.value)
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_reply_of_another_dimension_is_an_error(
    embedder: OpenAIEmbedder, server: ScriptedServer
) -> None:
    server.handler = lambda request: embeddings_reply(request, 384)

    with pytest.raises(EmbeddingError, match="384"):
        await embedder.embed_passages(["wrong size"])


async def test_a_reply_with_too_few_vectors_is_an_error(
    embedder: OpenAIEmbedder, server: ScriptedServer
) -> None:
    server.enqueue(Reply(200, {"data": [{"index": 0, "embedding": [1.0] * DIM}]}))

    with pytest.raises(EmbeddingError):
        await embedder.embed_passages(["one", "two"])


async def test_a_malformed_reply_is_an_error(
    embedder: OpenAIEmbedder, server: ScriptedServer
) -> None:
    server.enqueue(Reply(200, {"unexpected": True}))

    with pytest.raises(EmbeddingError):
        await embedder.embed_query("odd")


async def test_an_unreachable_server_is_an_embedding_error(sleeps: SleepRecorder) -> None:
    closed = ScriptedServer()
    await closed.start()
    url = closed.url
    await closed.close()
    embedder = OpenAIEmbedder(model="m", dim=8, api_key=None, base_url=url, sleep=sleeps)

    async with aclosing(embedder):
        with pytest.raises(EmbeddingError):
            await embedder.embed_query("anyone?")

    assert sleeps.delays == [0.5, 2.0]
