"""An embedder that reports each call's time and batch size to the metrics (`/metrics`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.observe import metrics
from app.rag.embeddings.base import Embedder, Vectors


class TimedEmbedder:
    """`inner`, measured: the server wraps the embedder it builds in one (the factory's own
    result stays the provider's class, which its tests and callers check)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.dim = inner.dim
        self.default_floor = inner.default_floor
        self.window = inner.window

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        started = time.perf_counter()
        try:
            return await self.inner.embed_passages(texts)
        finally:
            metrics.EMBEDDING_SECONDS.labels("passages").observe(time.perf_counter() - started)
            metrics.EMBEDDING_BATCH.labels("passages").observe(len(texts))

    async def embed_query(self, text: str) -> Vectors:
        started = time.perf_counter()
        try:
            return await self.inner.embed_query(text)
        finally:
            metrics.EMBEDDING_SECONDS.labels("query").observe(time.perf_counter() - started)
            metrics.EMBEDDING_BATCH.labels("query").observe(1)

    @property
    def ready(self) -> bool:
        return self.inner.ready

    async def warm(self) -> None:
        await self.inner.warm()

    async def aclose(self) -> None:
        await self.inner.aclose()
