"""An embedder that reports each call's time and batch size to the metrics (`/metrics`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.observe import metrics
from app.rag.embeddings.base import Vectors, Wrapping


class TimedEmbedder(Wrapping):
    """The inner embedder, measured: the server wraps the embedder it builds in one (the
    factory's own result stays the provider's class, which its tests and callers check)."""

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
