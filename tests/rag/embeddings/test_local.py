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
from app.rag.embeddings.base import EmbeddingError
from app.rag.embeddings.local import LocalEmbedder
from tests.support import eventually

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


async def test_a_text_gets_the_same_vector_alone_and_among_any_others(
    embedder: LocalEmbedder,
) -> None:
    # A one-letter text beside long ones moved most while the int8 scales followed the batch.
    texts = [ROLLBACK, COOKING, "a", "rotate the signing key", "b"]
    whole = await embedder.embed_passages(texts)
    one_thread = LocalEmbedder(threads=1)

    together = await one_thread.embed_passages(texts)
    alone = [await one_thread.embed_passages([text]) for text in texts]
    query = await one_thread.embed_query("a")
    await one_thread.aclose()

    assert np.array_equal(together, whole)
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


class HeldModel:
    """`Model.encode` patched to record the texts it runs, in order, and to hold on `hold`'s
    text until `release` is set (a thread of the model then stands busy as long as a test
    needs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, hold: str) -> None:
        self.ran: list[str] = []
        self.holding, self.release = threading.Event(), threading.Event()
        real_encode = local.Model.encode

        def encode(model: local.Model, texts: list[str]) -> Any:
            self.ran.append(texts[0])
            if texts[0] == hold:
                self.holding.set()
                self.release.wait(timeout=30)
            return real_encode(model, texts)

        monkeypatch.setattr(local.Model, "encode", encode)


async def test_a_query_goes_ahead_of_the_passages_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = LocalEmbedder(threads=1)
    await embedder.warm()
    held = HeldModel(monkeypatch, hold="passage 0")
    passages = [f"passage {i}" for i in range(6)]

    ingest = asyncio.create_task(embedder.embed_passages(passages))
    assert await asyncio.to_thread(held.holding.wait, 30)
    query = asyncio.create_task(embedder.embed_query("a question during the ingest"))

    async def queued() -> bool:  # the five passages left, and the query
        return embedder._queue.qsize() == len(passages)

    await eventually(queued, "the query is queued")
    held.release.set()
    vector = await query

    # The one thread finished the text it was running, then took the query before the five
    # passages that had waited longer.
    assert held.ran[:2] == ["passage 0", "a question during the ingest"]
    assert (await ingest).shape == (6, 384)
    assert held.ran[2:] == passages[1:]
    assert vector.shape == (384,)
    await embedder.aclose()


async def test_calls_of_passages_take_turns_so_a_small_one_waits_for_a_turn_not_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = LocalEmbedder(threads=1)
    await embedder.warm()
    large = [f"large {i}" for i in range(local.TURN + 4)]
    held = HeldModel(monkeypatch, hold=large[0])

    upload = asyncio.create_task(embedder.embed_passages(large))
    assert await asyncio.to_thread(held.holding.wait, 30)
    small = asyncio.create_task(embedder.embed_passages(["small 0", "small 1"]))

    async def queued() -> bool:  # the large call's texts left, and the small call's
        return embedder._queue.qsize() == len(large) - 1 + 2

    await eventually(queued, "the small call is queued")
    held.release.set()
    await asyncio.gather(upload, small)
    await embedder.aclose()

    # The large call's first turn, then the small call, then the large call's next turn.
    assert held.ran == [*large[: local.TURN], "small 0", "small 1", *large[local.TURN :]]


async def test_a_thread_takes_the_next_calls_texts_while_a_call_finishes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One call's last text holds its thread until the next call's text has started on the
    # other: with a pass per call, the second call waited for the first's last text, and a
    # core stood idle meanwhile (issue #33).
    embedder = LocalEmbedder(threads=2)
    await embedder.warm()
    first_running, next_started = threading.Event(), threading.Event()
    waited: list[bool] = []
    real_encode = local.Model.encode

    def encode(model: local.Model, texts: list[str]) -> Any:
        if texts[0] == "the first call's last text":
            first_running.set()
            waited.append(next_started.wait(timeout=30))
        else:
            next_started.set()
        return real_encode(model, texts)

    monkeypatch.setattr(local.Model, "encode", encode)

    first = asyncio.create_task(embedder.embed_passages(["the first call's last text"]))
    assert await asyncio.to_thread(first_running.wait, 30)
    second = await embedder.embed_passages(["the next call's text"])
    await first
    await embedder.aclose()

    assert waited == [True]
    assert second.shape == (1, 384)


async def test_a_cancelled_calls_waiting_texts_are_not_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = LocalEmbedder(threads=1)
    await embedder.warm()
    held = HeldModel(monkeypatch, hold="running when cancelled")
    call = asyncio.create_task(
        embedder.embed_passages(["running when cancelled", "skipped 1", "skipped 2"])
    )
    assert await asyncio.to_thread(held.holding.wait, 30)

    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    held.release.set()
    after = await embedder.embed_passages(["queued after the cancel"])
    await embedder.aclose()

    assert after.shape == (1, 384)
    assert held.ran == ["running when cancelled", "queued after the cancel"]


async def test_a_failing_text_fails_its_call_and_the_threads_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = LocalEmbedder(threads=2)
    await embedder.warm()
    real_encode = local.Model.encode

    def encode(model: local.Model, texts: list[str]) -> Any:
        if texts[0] == "breaks the model":
            raise RuntimeError("onnxruntime: invalid input")
        return real_encode(model, texts)

    monkeypatch.setattr(local.Model, "encode", encode)

    with pytest.raises(EmbeddingError, match="the local model failed: onnxruntime"):
        await embedder.embed_passages(["fine", "breaks the model", "also fine"])
    after = await embedder.embed_passages(["fine", "also fine"])
    await embedder.aclose()

    assert after.shape == (2, 384)


async def test_closing_stops_the_threads_and_a_later_call_starts_them_again() -> None:
    embedder = LocalEmbedder(threads=2)
    first = await embedder.embed_query("before closing")
    workers = list(embedder._workers)

    await embedder.aclose()

    assert not embedder.ready
    assert not any(worker.is_alive() for worker in workers)
    assert np.array_equal(await embedder.embed_query("before closing"), first)
    await embedder.aclose()


async def test_warming_loads_the_model_before_any_call() -> None:
    embedder = LocalEmbedder()
    assert not embedder.ready

    await embedder.warm()

    assert embedder.ready
    await embedder.aclose()


async def test_texts_over_threads_each_get_their_own_vector_in_order(
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


async def test_concurrent_calls_over_threads_each_get_their_own_rows() -> None:
    calls = [[f"call {c} text {i}: {'tern ' * (c + i)}" for i in range(c + 1)] for c in range(6)]
    one = LocalEmbedder(threads=1)
    expected = [await one.embed_passages(texts) for texts in calls]
    await one.aclose()
    three = LocalEmbedder(threads=3)

    got = await asyncio.gather(*(three.embed_passages(texts) for texts in calls))
    await three.aclose()

    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
