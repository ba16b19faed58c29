"""The `voyage` provider against a scripted Voyage API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import numpy as np
import pytest

from app.rag.embeddings import EmbeddingError
from app.rag.embeddings.hash import hash_vectors
from app.rag.embeddings.voyage import VoyageEmbedder
from tests.rag.embeddings.fakes import Reply, Request, ScriptedServer, SleepRecorder

KEY = "pa-test-0123456789SECRET"
DIM = 1024


def embeddings_reply(request: Request, dim: int = DIM) -> Reply:
    vectors = hash_vectors(request.body["input"], dim) * 2
    data = [
        {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)
    ]
    return Reply(200, {"object": "list", "data": data, "model": request.body["model"]})


@pytest.fixture
async def embedder(server: ScriptedServer, sleeps: SleepRecorder) -> AsyncIterator[VoyageEmbedder]:
    server.handler = embeddings_reply
    voyage = VoyageEmbedder(
        model="voyage-3.5-lite", dim=DIM, api_key=KEY, base_url=server.url, sleep=sleeps
    )
    yield voyage
    await voyage.aclose()


async def test_passages_are_sent_as_documents_and_come_back_as_unit_rows(
    embedder: VoyageEmbedder, server: ScriptedServer
) -> None:
    texts = ["roll back a deploy", "bake bread"]

    vectors = await embedder.embed_passages(texts)

    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/embeddings")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"model": "voyage-3.5-lite", "input": texts, "input_type": "document"}


async def test_a_query_is_sent_as_a_query(embedder: VoyageEmbedder, server: ScriptedServer) -> None:
    query = await embedder.embed_query("how do I roll back?")

    assert query.shape == (DIM,)
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, rtol=1e-6)
    assert server.requests[0].body["input_type"] == "query"


async def test_passages_are_sent_in_batches(server: ScriptedServer) -> None:
    server.handler = embeddings_reply
    texts = [f"passage {i}" for i in range(5)]
    embedder = VoyageEmbedder(
        model="voyage-3.5-lite", dim=DIM, api_key=KEY, base_url=server.url, batch_size=3
    )

    async with aclosing(embedder):
        vectors = await embedder.embed_passages(texts)

    assert [len(request.body["input"]) for request in server.requests] == [3, 2]
    np.testing.assert_allclose(vectors, hash_vectors(texts, DIM), rtol=1e-6)


async def test_another_dimension_is_asked_for_as_output_dimension(server: ScriptedServer) -> None:
    server.handler = lambda request: embeddings_reply(request, 512)
    embedder = VoyageEmbedder(model="voyage-3.5-lite", dim=512, api_key=KEY, base_url=server.url)

    async with aclosing(embedder):
        await embedder.embed_query("shorter")

    assert server.requests[0].body["output_dimension"] == 512


async def test_a_key_is_required() -> None:
    with pytest.raises(EmbeddingError):
        VoyageEmbedder(model="voyage-3.5-lite", dim=DIM, api_key=None)


async def test_a_503_is_retried(
    embedder: VoyageEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(503, {"detail": "Service unavailable"}))

    vectors = await embedder.embed_passages(["retry me"])

    assert vectors.shape == (1, DIM)
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]


async def test_a_rejected_key_fails_at_once_without_the_key_in_the_message(
    embedder: VoyageEmbedder, server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.enqueue(Reply(401, {"detail": f"Provided API key is invalid: {KEY}"}))

    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed_query("who am I")

    assert raised.value.code == "unavailable"
    assert "401" in raised.value.message
    assert "SECRET" not in str(raised.value)
    assert len(server.requests) == 1


async def test_a_reply_of_another_dimension_is_an_error(
    embedder: VoyageEmbedder, server: ScriptedServer
) -> None:
    server.handler = lambda request: embeddings_reply(request, 256)

    with pytest.raises(EmbeddingError, match="256"):
        await embedder.embed_query("wrong size")
