"""What the hosted providers share: retries with backoff (honouring a provider's Retry-After),
error messages that name no key, and a JSON endpoint for the OpenAI-style `/embeddings` APIs
(OpenAI, Voyage, Ollama, vLLM)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from app.rag.embeddings.base import EmbeddingError, Vectors, unit_rows

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

# Three tries: the delays before the second and the third. Long enough for a brief overload or
# a rate-limit window to pass, short enough that a request waiting on a query embedding fails
# within seconds when the provider is really down.
RETRY_DELAYS_S: tuple[float, ...] = (0.5, 2.0)
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# A provider's Retry-After is honoured up to this long. Someone is waiting on the embedding (a
# search, an upload), so a provider that asks for a longer pause fails the request at once with
# a message that says how long it asked for.
MAX_RETRY_AFTER_S = 10.0
TIMEOUT_S = 60.0
MAX_DETAIL_CHARS = 300

# Shapes of provider keys (OpenAI `sk-`, Voyage `pa-`, Google `AIza`), in case a provider echoes
# one back in an error message: the message reaches logs and API replies.
_KEY_SHAPES = re.compile(r"\b(?:sk|pa)-[\w\-*.]{6,}|\bAIza[\w\-]{10,}")


class TransientEmbeddingError(EmbeddingError):
    """A failure worth trying again: a network error, a rate limit, a 5xx. `retry_after_s` is
    the pause the provider asked for, when it named one."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def retry_after(headers: Mapping[str, str] | None, now: datetime | None = None) -> float | None:
    """The seconds a `Retry-After` header asks for (RFC 9110: delay-seconds or an HTTP date),
    or None when there is none or it cannot be read. `headers` is httpx's (case-insensitive)."""
    value = (headers or {}).get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT; a naive one is read as such
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def redact(text: str, secret: str | None) -> str:
    """`text` without `secret` or anything shaped like a provider key, cut to a sane length."""
    if secret:
        text = text.replace(secret, "[redacted]")
    text = _KEY_SHAPES.sub("[redacted]", text)
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    delays: Sequence[float] = RETRY_DELAYS_S,
    sleep: Sleep = asyncio.sleep,
) -> T:
    """The result of `attempt`, tried again after each delay while it fails transiently. When
    the provider asks for a longer pause than the delay (Retry-After), it gets that pause.

    Raises:
        EmbeddingError: a permanent failure at once, the last transient one, or a transient one
            whose provider asked for a pause longer than MAX_RETRY_AFTER_S.
    """
    for delay in delays:
        try:
            return await attempt()
        except TransientEmbeddingError as exc:
            pause = max(delay, exc.retry_after_s or 0.0)
            if pause > MAX_RETRY_AFTER_S:
                raise EmbeddingError(f"{exc.message} (asked to retry after {pause:.0f} s)") from exc
            await sleep(pause)
    try:
        return await attempt()
    except TransientEmbeddingError as exc:
        raise EmbeddingError(f"{exc.message} (after {len(delays) + 1} tries)") from exc


def _error_detail(response: httpx.Response) -> str:
    """The provider's own words for an error reply, in the shapes OpenAI, Voyage and Ollama use."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error", body.get("detail"))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return response.reason_phrase


class JsonEmbeddingsEndpoint:
    """POSTs to an OpenAI-style embeddings URL and reads `data[i].embedding`, with retries."""

    def __init__(
        self,
        *,
        provider: str,
        url: str,
        api_key: str | None,
        timeout_s: float = TIMEOUT_S,
        retry_delays: Sequence[float] = RETRY_DELAYS_S,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._provider = provider
        self._url = url
        self._api_key = api_key
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, timeout=timeout_s)

    async def embed(self, payload: dict[str, Any], count: int, dim: int) -> Vectors:
        """The `count` unit vectors of `dim` numbers that the endpoint returns for `payload`.

        Raises:
            EmbeddingError: the provider failed or replied with another shape.
        """
        reply = await with_retries(
            lambda: self._post(payload), delays=self._retry_delays, sleep=self._sleep
        )
        try:
            items = sorted(reply["data"], key=lambda item: item["index"])
            rows = [item["embedding"] for item in items]
        except (KeyError, TypeError) as exc:
            raise EmbeddingError(f"{self._provider} returned a malformed reply") from exc
        return unit_rows(rows, count, dim, self._provider)

    async def _post(self, payload: dict[str, Any]) -> Any:
        try:
            response = await self._client.post(self._url, json=payload)
        except httpx.TransportError as exc:
            raise TransientEmbeddingError(
                f"{self._provider} could not be reached ({type(exc).__name__})"
            ) from exc
        if response.is_success:
            try:
                return response.json()
            except ValueError as exc:
                raise EmbeddingError(f"{self._provider} returned a reply that is not JSON") from exc
        detail = redact(_error_detail(response), self._api_key)
        message = f"{self._provider} answered {response.status_code}: {detail}"
        if response.status_code in TRANSIENT_STATUSES:
            raise TransientEmbeddingError(message, retry_after_s=retry_after(response.headers))
        raise EmbeddingError(message)

    async def aclose(self) -> None:
        await self._client.aclose()
