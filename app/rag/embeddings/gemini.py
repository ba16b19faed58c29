"""The `gemini` provider: gemini-embedding-001 through the google-genai SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

import httpx
import httpx2
from google import genai
from google.genai import errors, types

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import (
    EmbeddingError,
    SpanCounter,
    Vectors,
    estimate_tokens,
    in_batches,
    only_row,
    unit_rows,
)
from app.rag.embeddings.remote import (
    RETRY_DELAYS_S,
    TIMEOUT_S,
    TRANSIENT_STATUSES,
    Sleep,
    TransientEmbeddingError,
    redact,
    retry_after,
    with_retries,
)

TaskType = Literal["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"]
# Tokens one input may have (gemini-embedding-001, text-embedding-004); Gemini cuts the rest.
WINDOW = 2048
# batchEmbedContents takes at most 100 requests.
BATCH_SIZE = 100


class GeminiEmbedder:
    """Passages as RETRIEVAL_DOCUMENT, queries as RETRIEVAL_QUERY, `dim` numbers each.

    Gemini shortens its 3,072-number vectors to `output_dimensionality` by truncation, which
    leaves them shorter than unit length: every reply is normalised again. Retries are ours (the
    SDK's are off), so all hosted providers back off alike.
    """

    provider = "gemini"

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
        if not api_key:
            raise EmbeddingError("GOOGLE_API_KEY is not set")
        self.model = model
        self.dim = dim
        self.default_floor = PROVIDER_DEFAULTS["gemini"][2]
        self.window: int | None = WINDOW
        self._api_key = api_key
        self._batch_size = min(batch_size, BATCH_SIZE)
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep
        options = types.HttpOptions(base_url=base_url or None, timeout=int(timeout_s * 1000))
        # vertexai=False: the environment must not switch the client to Vertex AI behind our back.
        self._client = genai.Client(api_key=api_key, vertexai=False, http_options=options)

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        async def embed(batch: Sequence[str]) -> Vectors:
            return await self._embed(batch, "RETRIEVAL_DOCUMENT")

        return await in_batches(texts, self._batch_size, self.dim, embed)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return estimate_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter | None:
        return None  # the estimate is as cheap per slice as once for the document

    async def embed_query(self, text: str) -> Vectors:
        return only_row(await self._embed([text], "RETRIEVAL_QUERY"))

    async def _embed(self, texts: Sequence[str], task_type: TaskType) -> Vectors:
        config = types.EmbedContentConfig(task_type=task_type, output_dimensionality=self.dim)

        async def attempt() -> types.EmbedContentResponse:
            try:
                return await self._client.aio.models.embed_content(
                    model=self.model, contents=list(texts), config=config
                )
            except errors.APIError as exc:
                detail = redact(exc.message or exc.status or "", self._api_key)
                message = f"gemini answered {exc.code}: {detail}"
                if exc.code in TRANSIENT_STATUSES:
                    headers = getattr(exc.response, "headers", None)
                    raise TransientEmbeddingError(
                        message, retry_after_s=retry_after(headers)
                    ) from exc
                raise EmbeddingError(message) from exc
            except (httpx2.TransportError, httpx.TransportError) as exc:
                raise TransientEmbeddingError(
                    f"gemini could not be reached ({type(exc).__name__})"
                ) from exc

        response = await with_retries(attempt, delays=self._retry_delays, sleep=self._sleep)
        rows = [embedding.values for embedding in response.embeddings or []]
        return unit_rows(rows, len(texts), self.dim, self.provider)

    @property
    def ready(self) -> bool:
        return True  # nothing to load: every call goes to the API

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._client.aio.aclose()
        self._client.close()
