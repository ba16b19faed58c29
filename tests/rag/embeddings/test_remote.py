"""The hosted providers' shared retries and key-free error messages."""

from __future__ import annotations

import pytest

from app.rag.embeddings import EmbeddingError
from app.rag.embeddings.remote import TransientEmbeddingError, redact, with_retries
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
