"""The `local` provider: the real all-MiniLM-L6-v2, int8 ONNX, from the committed model files."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from app.rag.embeddings import local
from app.rag.embeddings.local import LocalEmbedder

ROLLBACK = (
    "To roll back a deployment, redeploy the previous release tag and run the database "
    "migration's downgrade step; the release pipeline keeps the last five builds."
)
COOKING = (
    "Whisk the eggs with sugar until pale, fold in the flour, and bake the sponge at 180 "
    "degrees for twenty-five minutes."
)


@pytest.fixture(scope="module")
async def embedder() -> AsyncIterator[LocalEmbedder]:
    """One model for the module: loading it takes a few seconds."""
    minilm = LocalEmbedder()
    yield minilm
    await minilm.aclose()


async def test_local_embedder_is_minilm_with_384_dimensions(embedder: LocalEmbedder) -> None:
    assert embedder.provider == "local"
    assert embedder.model == "all-MiniLM-L6-v2-onnx-int8"
    assert embedder.dim == 384


async def test_a_rollback_question_is_closer_to_the_rollback_passage_than_to_cooking(
    embedder: LocalEmbedder,
) -> None:
    rollback, cooking = await embedder.embed_passages([ROLLBACK, COOKING])

    query = await embedder.embed_query("How do I roll back a deploy?")

    assert query @ rollback > query @ cooking + 0.2


async def test_passages_are_unit_float32_rows_and_a_query_is_one_unit_vector(
    embedder: LocalEmbedder,
) -> None:
    passages = await embedder.embed_passages([ROLLBACK, COOKING, "short"])
    query = await embedder.embed_query("roll back")

    assert passages.shape == (3, 384)
    assert passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-5)
    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, rtol=1e-5)


async def test_a_query_is_embedded_like_a_passage(embedder: LocalEmbedder) -> None:
    # MiniLM was trained without query/passage prefixes.
    query = await embedder.embed_query(ROLLBACK)
    [passage] = await embedder.embed_passages([ROLLBACK])

    np.testing.assert_allclose(query, passage, atol=1e-5)


async def test_no_passages_give_an_empty_matrix(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed_passages([])

    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


async def test_a_text_gets_the_same_vector_alone_and_in_any_batch(
    embedder: LocalEmbedder,
) -> None:
    # A one-letter text beside long ones moved most while the int8 scales followed the batch.
    texts = [ROLLBACK, COOKING, "a", "rotate the signing key", "b"]
    whole = await embedder.embed_passages(texts)
    batched = LocalEmbedder(batch_size=2)

    in_batches = await batched.embed_passages(texts)
    alone = [await batched.embed_passages([text]) for text in texts]
    query = await batched.embed_query("a")
    await batched.aclose()

    assert np.array_equal(in_batches, whole)
    assert np.array_equal(np.concatenate(alone), whole)
    assert np.array_equal(query, whole[2])


async def test_the_model_loads_from_the_package_with_the_network_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network refused by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)

    model = await asyncio.to_thread(local.load_model)

    assert model.encode(["offline"]).shape == (1, 384)
    assert attempts == []


def test_the_committed_model_files_are_the_ones_the_export_script_recorded() -> None:
    # scripts/export_local_model.py --check rebuilds them from the bundled weights (ADR 0010).
    recorded = (local.MODEL_DIR / "SHA256SUMS").read_text().splitlines()

    for line in recorded:
        digest, name = line.split()
        assert hashlib.sha256((local.MODEL_DIR / name).read_bytes()).hexdigest() == digest
    assert sorted(line.split()[1] for line in recorded) == ["model.onnx", "tokenizer.json"]


async def test_a_text_longer_than_the_window_is_cut_where_the_model_stops_reading(
    embedder: LocalEmbedder,
) -> None:
    # 256 word pieces is the model's window: what lies beyond cannot change the vector.
    words = " ".join(f"deployment{i % 7} rollback" for i in range(400))
    [short, long] = await embedder.embed_passages([words, words + " cooking recipes " * 50])

    assert short @ long > 0.999


def test_count_tokens_counts_every_word_piece_with_cls_and_sep_past_the_window() -> None:
    embedder = LocalEmbedder()

    counts = embedder.count_tokens(["", "the", "word " * 1000, "日本語"])

    assert embedder.window == 256
    assert counts == [2, 3, 1002, 5]
    assert embedder.count_tokens(["word " * 1000]) == [1002]  # one text takes another path
    assert embedder.count_tokens([]) == []


async def test_concurrent_first_calls_load_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[int] = []
    real_load = local.load_model

    def counting_load() -> Any:
        loads.append(1)
        return real_load()

    monkeypatch.setattr(local, "load_model", counting_load)
    embedder = LocalEmbedder()

    vectors = await asyncio.gather(*(embedder.embed_query(f"query {i}") for i in range(4)))
    await embedder.aclose()

    assert len(loads) == 1
    assert all(vector.shape == (384,) for vector in vectors)


async def test_concurrent_queries_share_one_forward_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = LocalEmbedder(threads=1)  # a pass is then one `Model.encode_taking` call
    await embedder.warm()
    passes: list[int] = []
    real_taking = local.Model.encode_taking

    def counting_taking(model: local.Model, texts: list[str], out: Any, turns: Any) -> None:
        passes.append(len(texts))
        real_taking(model, texts, out, turns)

    monkeypatch.setattr(local.Model, "encode_taking", counting_taking)
    questions = [f"how do I rotate key number {i}?" for i in range(8)]

    together = await asyncio.gather(*(embedder.embed_query(q) for q in questions))
    alone = [await embedder.embed_query(q) for q in questions]
    await embedder.aclose()

    assert passes[0] == 8  # the eight arrived in one turn of the event loop: one pass
    assert len(passes) == 1 + 8
    assert all(np.array_equal(a, b) for a, b in zip(together, alone, strict=True))


async def test_queries_arriving_during_a_pass_share_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = LocalEmbedder(threads=1)  # a pass is then one `Model.encode_taking` call
    await embedder.warm()
    passes: list[int] = []
    first_pass_running, release = threading.Event(), threading.Event()
    real_taking = local.Model.encode_taking

    def held_taking(model: local.Model, texts: list[str], out: Any, turns: Any) -> None:
        passes.append(len(texts))
        if len(passes) == 1:
            first_pass_running.set()
            release.wait(timeout=30)
        real_taking(model, texts, out, turns)

    monkeypatch.setattr(local.Model, "encode_taking", held_taking)

    first = asyncio.create_task(embedder.embed_query("the first query finds the model idle"))
    assert await asyncio.to_thread(first_pass_running.wait, 30)
    later = [
        asyncio.create_task(embedder.embed_query(f"arrived during the pass {i}")) for i in range(5)
    ]
    await asyncio.sleep(0.05)  # well after their arrival: nothing starts while the pass runs
    assert passes == [1]
    release.set()
    vectors = await asyncio.gather(first, *later)
    await embedder.aclose()

    assert passes == [1, 5]
    assert all(vector.shape == (384,) for vector in vectors)


async def test_warming_loads_the_model_before_any_call() -> None:
    embedder = LocalEmbedder()
    assert not embedder.ready

    await embedder.warm()

    assert embedder.ready
    await embedder.aclose()


async def test_a_query_waits_for_one_batch_of_an_ingest_not_for_all_of_it() -> None:
    embedder = LocalEmbedder(batch_size=1)
    await embedder.embed_query("load the model first")
    ingest = asyncio.create_task(embedder.embed_passages([ROLLBACK, COOKING] * 4))
    await asyncio.sleep(0)  # one turn of the loop: the ingest takes the lock for its first batch

    query = await embedder.embed_query("How do I roll back a deploy?")

    assert not ingest.done()
    assert (await ingest).shape == (8, 384)
    assert query.shape == (384,)
    await embedder.aclose()


async def test_a_pass_over_threads_gives_each_text_its_own_vector_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [f"passage {i}: {'heron ' * i}nests by the estuary" for i in range(7)]
    one = LocalEmbedder(threads=1)
    single = await one.embed_passages(texts)
    await one.aclose()
    taken: list[tuple[int, list[str]]] = []
    real_encode = local.Model.encode

    def recording_encode(model: local.Model, given: list[str]) -> Any:
        taken.append((threading.get_ident(), given))
        return real_encode(model, given)

    monkeypatch.setattr(local.Model, "encode", recording_encode)
    three = LocalEmbedder(threads=3)
    shared = await three.embed_passages(texts)
    await three.aclose()

    # Each text was run alone and once, whichever thread took it, and the rows came back in
    # the texts' order, each the same to the bit as on one thread.
    assert all(len(given) == 1 for _, given in taken)
    assert sorted(given[0] for _, given in taken) == sorted(texts)
    assert np.array_equal(shared, single)


def test_turns_hand_each_index_to_one_taker_however_many_threads_take() -> None:
    turns = local.Turns(10_000)
    taken: list[list[int]] = [[] for _ in range(4)]

    def take(mine: list[int]) -> None:
        while (index := turns.take()) is not None:
            mine.append(index)

    threads = [threading.Thread(target=take, args=(mine,)) for mine in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(i for mine in taken for i in mine) == list(range(10_000))
    assert turns.take() is None
