"""Which errors mean "the database cannot be reached" (a 503) rather than a bug (a 500)."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from app.db.availability import unreachable
from tests.support import free_port


async def test_a_refused_connection_is_unreachable() -> None:
    engine = create_async_engine(f"postgresql+asyncpg://corpus@127.0.0.1:{free_port()}/corpus")
    try:
        with pytest.raises(ConnectionRefusedError) as refused:
            async with engine.connect():
                pass
    finally:
        await engine.dispose()
    assert unreachable(refused.value)
    assert unreachable(ExceptionGroup("both", [refused.value, refused.value]))


def _raised(error: Exception) -> Exception:
    try:
        raise error
    except Exception as caught:
        return caught


@pytest.mark.parametrize(
    "error", [TimeoutError("a provider"), ConnectionResetError("a socket of ours"), ValueError()]
)
def test_errors_from_outside_the_driver_are_not_an_outage(error: Exception) -> None:
    assert not unreachable(_raised(error))
    assert not unreachable(ExceptionGroup("mixed", [_raised(error)]))
