"""The `hash` provider: signed feature hashing of lower-cased word tokens, for tests and load
checks. Deterministic across processes and releases, fast, and without semantics: texts are
similar exactly when they share words."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import SpanCounter, Vectors, in_batches, normalise, only_row

MODEL, DIM, FLOOR = PROVIDER_DEFAULTS["hash"]
_WORD = re.compile(r"\w+")
# Large enough that a whole ingest fits, so passages run in a worker thread only a few times.
BATCH_SIZE = 4096


@lru_cache(maxsize=1 << 16)
def _feature(token: str, dim: int) -> tuple[int, float]:
    """The column and sign of a token: blake2b, not hash(), which is salted per process."""
    digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
    sign = -1.0 if digest >> 63 else 1.0
    return digest % dim, sign


def hash_vectors(texts: Sequence[str], dim: int = DIM) -> Vectors:
    """Unit rows of signed token counts; a text without a word token gives the zero vector.

    Zero rather than some fixed unit vector: every empty text would otherwise be a perfect match
    for every other, while the zero vector is similar to nothing and falls under any floor.
    """
    rows: list[int] = []
    columns: list[int] = []
    signs: list[float] = []
    for row, text in enumerate(texts):
        for token in _WORD.findall(text.lower()):
            column, sign = _feature(token, dim)
            rows.append(row)
            columns.append(column)
            signs.append(sign)
    flat = np.asarray(rows, dtype=np.int64) * dim + np.asarray(columns, dtype=np.int64)
    counts = np.bincount(flat, weights=np.asarray(signs), minlength=len(texts) * dim)
    return normalise(counts.reshape(len(texts), dim))


class HashEmbedder:
    """384 dimensions, floor 0.2 (API.md). Queries and passages are embedded alike."""

    provider = "hash"

    def __init__(self, *, dim: int = DIM, batch_size: int = BATCH_SIZE) -> None:
        self.model = MODEL if dim == DIM else f"hash-{dim}"
        self.dim = dim
        self.default_floor = FLOOR
        self.window: int | None = None  # it reads every word of any text
        self._batch_size = batch_size

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        # About 100k texts a second: a big ingest would hold the event loop for a while, so it
        # runs in a thread (the function is pure: no lock needed).
        async def embed(batch: Sequence[str]) -> Vectors:
            return await asyncio.to_thread(hash_vectors, batch, self.dim)

        return await in_batches(texts, self._batch_size, self.dim, embed)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        # The project's estimate (a token per four characters): with no window to fit, the
        # chunks stay the size they were before embedders counted.
        return [-(-len(text) // 4) for text in texts]

    def span_counts(self, document: str) -> SpanCounter | None:
        return None  # the estimate is as cheap per slice as once for the document

    async def embed_query(self, text: str) -> Vectors:
        # Microseconds: cheaper inline than a thread hop.
        return only_row(hash_vectors([text], self.dim))

    @property
    def ready(self) -> bool:
        return True  # nothing to load: vectors are computed from the words

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
