"""OpenAI's embeddings API, and the servers that speak it (Ollama, vLLM) at OPENAI_BASE_URL."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# The dimensions OpenAI's models return unasked. `dimensions` is sent only to shorten one of
# these: servers that speak the API for other models (Ollama, vLLM) may reject the field.
NATIVE_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Tokens one input may have. A model served elsewhere (Ollama, vLLM) is assumed to read as
# little as the common BERT-sized ones: its chunks are the usual size, only a very long fence
# or table is cut sooner than it need be.
WINDOWS = {
    "text-embedding-3-small": 8191,
    "text-embedding-3-large": 8191,
    "text-embedding-ada-002": 8191,
}
OTHER_WINDOW = 512
# OpenAI takes up to 2,048 inputs and 300,000 tokens a request; 128 chunks of a few hundred
# tokens stay well inside both, and inside what a small local server handles in one go.
BATCH_SIZE = 128


class OpenAIEmbedder:
    """`POST {base}/embeddings`; the key is optional when a base URL is set (local servers)."""

    provider = "openai"

    def __init__(
        self,
        *,
        model: str,
        dim: int,
        api_key: str | None,
        base_url: str = "",
        batch_size: int = BATCH_SIZE,
        timeout_s: float = TIMEOUT_S,
        retry_delays: Sequence[float] = RETRY_DELAYS_S,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not api_key and not base_url:
            raise EmbeddingError(
                "OPENAI_API_KEY is not set (it may be left out with OPENAI_BASE_URL)"
            )
        self.model = model
        self.dim = dim
        self.default_floor = PROVIDER_DEFAULTS["openai"][2]
        self.window: int | None = WINDOWS.get(model, OTHER_WINDOW)
        self._batch_size = batch_size
        self._extra: dict[str, Any] = {}
        if NATIVE_DIMS.get(model, dim) != dim:
            self._extra["dimensions"] = dim
        self._endpoint = JsonEmbeddingsEndpoint(
            provider="openai",
            url=f"{(base_url or DEFAULT_BASE_URL).rstrip('/')}/embeddings",
            api_key=api_key,
            timeout_s=timeout_s,
            retry_delays=retry_delays,
            sleep=sleep,
        )

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return await in_batches(texts, self._batch_size, self.dim, self._embed)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return estimate_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter | None:
        return None  # the estimate is as cheap per slice as once for the document

    async def embed_query(self, text: str) -> Vectors:
        return only_row(await self._embed([text]))

    async def _embed(self, texts: Sequence[str]) -> Vectors:
        payload = {"model": self.model, "input": list(texts), **self._extra}
        return await self._endpoint.embed(payload, len(texts), self.dim)

    @property
    def ready(self) -> bool:
        return True  # nothing to load: every call goes to the API

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._endpoint.aclose()
