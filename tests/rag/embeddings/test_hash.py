"""The `hash` provider: deterministic signed feature hashing (API.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from app.rag.embeddings.hash import HashEmbedder, hash_vectors
from tests.support import PROJECT_ROOT


async def test_hash_embedder_is_384_dimensional_with_floor_0_2() -> None:
    embedder = HashEmbedder()

    assert (embedder.provider, embedder.model, embedder.dim) == ("hash", "hash-384", 384)
    assert embedder.default_floor == pytest.approx(0.2)


async def test_passages_are_unit_float32_rows() -> None:
    vectors = await HashEmbedder().embed_passages(["Roll back a deploy", "Bake bread", "x"])

    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


async def test_query_is_a_unit_vector_equal_to_its_passage_embedding() -> None:
    embedder = HashEmbedder()

    query = await embedder.embed_query("How do I roll back a deploy?")
    passage = await embedder.embed_passages(["How do I roll back a deploy?"])

    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_array_equal(query, passage[0])


def test_known_tokens_keep_their_column_and_sign() -> None:
    # Stored vectors depend on this mapping: changing it silently breaks every index.
    vectors = hash_vectors(["deploy", "rollback", "kubernetes"])

    assert [np.flatnonzero(row).tolist() for row in vectors] == [[50], [228], [12]]
    assert vectors[0, 50] == 1.0
    assert vectors[1, 228] == 1.0
    assert vectors[2, 12] == -1.0


def test_vectors_do_not_depend_on_the_process_hash_seed() -> None:
    code = (
        "from app.rag.embeddings.hash import hash_vectors;"
        "print(hash_vectors(['Deploy the release, then roll it back'])[0].tobytes().hex())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        for seed in ("1", "2")
    }

    assert outputs == {hash_vectors(["Deploy the release, then roll it back"])[0].tobytes().hex()}


def test_case_and_punctuation_do_not_change_the_vector() -> None:
    loud, quiet = hash_vectors(["Deploy, DEPLOY! (rollback)", "deploy deploy rollback"])

    np.testing.assert_array_equal(loud, quiet)


def test_repeated_words_weigh_more() -> None:
    once, twice = hash_vectors(["deploy rollback", "deploy deploy rollback"])

    assert not np.array_equal(once, twice)
    assert twice[50] > once[50]


def test_texts_sharing_words_are_more_similar_than_unrelated_texts() -> None:
    question, answer, recipe = hash_vectors(
        [
            "how to roll back a failed deploy",
            "to roll back a deploy, redeploy the previous release",
            "whisk eggs and sugar, then fold in flour",
        ]
    )

    assert question @ answer > 0.2 > question @ recipe


def test_text_without_words_gives_the_zero_vector() -> None:
    vectors = hash_vectors(["", "  ...!? ", "deploy"])

    assert not vectors[:2].any()
    assert np.isfinite(vectors).all()
    assert vectors[2] @ vectors[0] == 0.0


async def test_no_texts_give_an_empty_matrix() -> None:
    vectors = await HashEmbedder().embed_passages([])

    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


async def test_batches_give_the_same_vectors_as_one_call() -> None:
    texts = [f"document {i} about topic {i % 3}" for i in range(7)]

    batched = await HashEmbedder(batch_size=2).embed_passages(texts)

    np.testing.assert_array_equal(batched, hash_vectors(texts))


def test_other_dimensions_hash_into_that_many_columns() -> None:
    vectors = hash_vectors(["one two three four"], dim=64)

    assert vectors.shape == (1, 64)
    np.testing.assert_allclose(np.linalg.norm(vectors), 1.0, rtol=1e-6)
