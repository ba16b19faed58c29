"""Engines, pools and the read/write connection types."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import NewType

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

# Distinct types let a replica take the reads later without touching service signatures; a
# write connection is accepted wherever a read connection is expected.
ReadConnection = NewType("ReadConnection", AsyncConnection)
WriteConnection = NewType("WriteConnection", ReadConnection)

# Opens a short transaction of its own, committed when the block ends: for the rare state that
# must outlive a failing request (a password guess is counted, then the request answers 401),
# and for work that must hold no connection between its transactions (Argon2).
# `Database.write` is one; tests pass one that opens a savepoint of their own transaction.
ShortTransaction = Callable[[], AbstractAsyncContextManager[WriteConnection]]


CONNECT_TIMEOUT_S = 10


def make_engine(url: str, *, max_connections: int = 20) -> AsyncEngine:
    """An asyncpg engine with a pool that survives a restarted server (pre-ping), opening at
    most `max_connections` (half kept open, half opened under load)."""
    pool_size = max(1, max_connections // 2)
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_connections - pool_size,
        pool_pre_ping=True,
        connect_args={
            # A database host that drops packets (rather than refusing) would otherwise hold a
            # request for asyncpg's default of 60 s before it can be answered 503.
            "timeout": CONNECT_TIMEOUT_S,
            "server_settings": {
                # JIT compilation only slows our short queries down.
                "jit": "off",
                "application_name": "corpus",
                # pgvector 0.8: an HNSW scan with a filter (workspace, visibility) goes on until
                # it has enough rows, instead of returning fewer than the LIMIT.
                "hnsw.iterative_scan": "relaxed_order",
            },
        },
    )


class Database:
    """The process's engines: one for writes, one for reads (the same unless a replica is set)."""

    def __init__(
        self, write_url: str, read_url: str | None = None, *, max_connections: int = 20
    ) -> None:
        self.write_engine = make_engine(write_url, max_connections=max_connections)
        self.read_engine = (
            make_engine(read_url, max_connections=max_connections)
            if read_url
            else self.write_engine
        )

    @asynccontextmanager
    async def write(self) -> AsyncIterator[WriteConnection]:
        """One transaction, committed when the block ends without an error."""
        async with self.write_engine.begin() as conn:
            yield WriteConnection(ReadConnection(conn))

    @asynccontextmanager
    async def read(self) -> AsyncIterator[ReadConnection]:
        """One read-only transaction."""
        async with self.read_engine.connect() as conn:
            await conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            yield ReadConnection(conn)
            await conn.rollback()

    async def dispose(self) -> None:
        await self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            await self.read_engine.dispose()
