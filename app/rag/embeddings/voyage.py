"""Voyage AI's embeddings API (`input_type` tells queries from documents)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import (
    EmbeddingError,
    SpanCounter,
    Vectors,
    estimate_tokens,
    in_batches,
    only_row,
)
from app.rag.embeddings.remote import (
    RETRY_DELAYS_S,
    TIMEOUT_S,
    JsonEmbeddingsEndpoint,
    Sleep,
)

DEFAULT_BASE_URL = "https://api.voyageai.com/v1"
# Voyage's current models answer with 1,024 dimensions unless `output_dimension` asks for 256,
# 512 or 2,048; it is sent only when the configured dimension differs.
NATIVE_DIM = 1024
# Tokens one input may have (voyage-3 and later; Voyage cuts longer ones).
WINDOW = 32000
# Voyage takes up to 1,000 inputs a request (and 1M tokens for the lite model).
BATCH_SIZE = 128


class VoyageEmbedder:
    """`POST {base}/embeddings` with `input_type` "document" for passages, "query" for queries."""

    provider = "voyage"

    def __init__(
        self,
        *,
        model: str,
        dim: int,
        api_key: str | None,
        base_url: str = DEFAULT_BASE_URL,
        batch_size: int = BATCH_SIZE,
        timeout_s: float = TIMEOUT_S,
        retry_delays: Sequence[float] = RETRY_DELAYS_S,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not api_key:
            raise EmbeddingError("VOYAGE_API_KEY is not set")
        self.model = model
        self.dim = dim
        self.default_floor = PROVIDER_DEFAULTS["voyage"][2]
        self.window: int | None = WINDOW
        self._batch_size = batch_size
        self._extra: dict[str, Any] = {} if dim == NATIVE_DIM else {"output_dimension": dim}
        self._endpoint = JsonEmbeddingsEndpoint(
            provider="voyage",
            url=f"{base_url.rstrip('/')}/embeddings",
            api_key=api_key,
            timeout_s=timeout_s,
            retry_delays=retry_delays,
            sleep=sleep,
        )

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        async def embed(batch: Sequence[str]) -> Vectors:
            return await self._embed(batch, "document")

        return await in_batches(texts, self._batch_size, self.dim, embed)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return estimate_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter | None:
        return None  # the estimate is as cheap per slice as once for the document

    async def embed_query(self, text: str) -> Vectors:
        return only_row(await self._embed([text], "query"))

    async def _embed(
        self, texts: Sequence[str], input_type: Literal["query", "document"]
    ) -> Vectors:
        payload = {
            "model": self.model,
            "input": list(texts),
            "input_type": input_type,
            **self._extra,
        }
        return await self._endpoint.embed(payload, len(texts), self.dim)

    @property
    def ready(self) -> bool:
        return True  # nothing to load: every call goes to the API

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._endpoint.aclose()
