"""Which errors mean "the database cannot be reached" (a 503) rather than a bug (a 500)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from app.db.availability import unreachable
from tests.support import free_port


async def test_a_missing_unix_socket_is_unreachable(tmp_path: Path) -> None:
    # A stopped local server leaves no socket file: the connect fails with ENOENT, no refusal.
    engine = create_async_engine(f"postgresql+asyncpg://corpus@/corpus?host={tmp_path}")
    try:
        with pytest.raises(FileNotFoundError) as missing:
            async with engine.connect():
                pass
    finally:
        await engine.dispose()
    assert unreachable(missing.value)
    assert unreachable(_raised(RuntimeError("a wrapper"), cause=missing.value))


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


def _raised(error: Exception, *, cause: BaseException | None = None) -> Exception:
    try:
        raise error from cause
    except Exception as caught:
        return caught


@pytest.mark.parametrize(
    "error", [TimeoutError("a provider"), ConnectionResetError("a socket of ours"), ValueError()]
)
def test_errors_from_outside_the_driver_are_not_an_outage(error: Exception) -> None:
    assert not unreachable(_raised(error))
    assert not unreachable(ExceptionGroup("mixed", [_raised(error)]))
