"""The hosted providers' shared retries and key-free error messages."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from app.rag.embeddings import EmbeddingError
from app.rag.embeddings.remote import (
    MAX_RETRY_AFTER_S,
    TransientEmbeddingError,
    redact,
    retry_after,
    with_retries,
)
from tests.rag.embeddings.fakes import SleepRecorder


class Flaky:
    """Fails with the given errors, in order, then answers "ok"."""

    def __init__(self, *errors: EmbeddingError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_transient_failures_are_retried_with_growing_delays(sleeps: SleepRecorder) -> None:
    attempt = Flaky(TransientEmbeddingError("busy"), TransientEmbeddingError("busy"))

    result = await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps)

    assert result == "ok"
    assert attempt.calls == 3
    assert sleeps.delays == [0.5, 2.0]


async def test_a_permanent_failure_is_not_retried(sleeps: SleepRecorder) -> None:
    attempt = Flaky(EmbeddingError("bad request"))

    with pytest.raises(EmbeddingError):
        await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps)

    assert attempt.calls == 1
    assert sleeps.delays == []


async def test_the_last_transient_failure_is_raised_as_an_embedding_error(
    sleeps: SleepRecorder,
) -> None:
    attempt = Flaky(*[TransientEmbeddingError("busy")] * 3)

    with pytest.raises(EmbeddingError) as raised:
        await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps)

    assert not isinstance(raised.value, TransientEmbeddingError)
    assert raised.value.code == "unavailable"
    assert attempt.calls == 3


async def test_a_provider_asking_for_a_longer_pause_gets_it(sleeps: SleepRecorder) -> None:
    attempt = Flaky(TransientEmbeddingError("busy", retry_after_s=4.0))

    assert await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps) == "ok"

    assert sleeps.delays == [4.0]


async def test_a_shorter_retry_after_does_not_shorten_the_backoff(sleeps: SleepRecorder) -> None:
    attempt = Flaky(TransientEmbeddingError("busy", retry_after_s=0.0))

    assert await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps) == "ok"

    assert sleeps.delays == [0.5]


async def test_a_pause_longer_than_the_limit_fails_at_once(sleeps: SleepRecorder) -> None:
    attempt = Flaky(TransientEmbeddingError("quota", retry_after_s=MAX_RETRY_AFTER_S + 1))

    with pytest.raises(EmbeddingError) as raised:
        await with_retries(attempt, delays=(0.5, 2.0), sleep=sleeps)

    assert raised.value.message == "quota (asked to retry after 11 s)"
    assert attempt.calls == 1
    assert sleeps.delays == []


NOW = datetime(2026, 12, 3, 8, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        ("Thu, 03 Dec 2026 08:00:30 GMT", 30.0),
        ("Thu, 03 Dec 2026 07:59:00 GMT", 0.0),  # a date already past: no extra wait
        ("soon", None),
        ("-3", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_or_an_http_date(
    value: str | None, seconds: float | None
) -> None:
    headers = httpx.Headers({"Retry-After": value} if value is not None else {})

    assert retry_after(headers, now=NOW) == seconds


@pytest.mark.parametrize(
    "key",
    [
        "my-own-secret-value",
        "sk-proj-AbC123dEf456",
        "pa-0123456789abcdef",
        "AIzaSyA0123456789abcdef",
    ],
)
def test_keys_are_redacted_from_provider_messages(key: str) -> None:
    message = redact(f"invalid key {key} for this project", "my-own-secret-value")

    assert key not in message
    assert message.startswith("invalid key ")


def test_long_provider_messages_are_cut() -> None:
    assert len(redact("x" * 5000, None)) <= 300
