"""Engines, pools and the read/write connection types."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import NewType

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from app.db.availability import unreachable
from app.db.replica import Replica
from app.observe import metrics

# Distinct types let a replica take the reads later without touching service signatures; a
# write connection is accepted wherever a read connection is expected.
ReadConnection = NewType("ReadConnection", AsyncConnection)
WriteConnection = NewType("WriteConnection", ReadConnection)

# Opens a short transaction of its own, committed when the block ends: for the rare state that
# must outlive a failing request (a password guess is counted, then the request answers 401),
# and for work that must hold no connection between its transactions (Argon2).
# `Database.write` is one; tests pass one that opens a savepoint of their own transaction.
ShortTransaction = Callable[[], AbstractAsyncContextManager[WriteConnection]]

# Opens a read-only transaction beside the request's (`SideReads.reserve`).
SideRead = Callable[[], AbstractAsyncContextManager[ReadConnection]]


CONNECT_TIMEOUT_S = 10


def make_engine(
    url: str, *, max_connections: int = 20, application_name: str = "corpus"
) -> AsyncEngine:
    """An asyncpg engine with a pool that survives a restarted server (pre-ping), opening at
    most `max_connections` (half kept open, half opened under load)."""
    pool_size = max(1, max_connections // 2)
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_connections - pool_size,
        pool_pre_ping=True,
        # The most recently returned connection first: under light load requests keep to the
        # few backends that have their statements prepared and their caches warm. First in,
        # first out, one client cycled through every connection a burst had opened, and a
        # hybrid search after eight clients took 7.8 ms at p50 instead of 6.3 (SciFact's
        # claims, docs/BENCHMARKS.md).
        pool_use_lifo=True,
        connect_args={
            # A database host that drops packets (rather than refusing) would otherwise hold a
            # request for asyncpg's default of 60 s before it can be answered 503.
            "timeout": CONNECT_TIMEOUT_S,
            "server_settings": {
                # JIT compilation only slows our short queries down.
                "jit": "off",
                # What pg_stat_activity shows: the replica's connections as "corpus-read".
                "application_name": application_name,
                # pgvector 0.8: an HNSW scan with a filter (workspace, visibility) goes on until
                # it has enough rows, instead of returning fewer than the LIMIT.
                "hnsw.iterative_scan": "relaxed_order",
            },
        },
    )


@asynccontextmanager
async def _read_only(engine: AsyncEngine, name: str = "read") -> AsyncIterator[ReadConnection]:
    metrics.asking_pool(engine.pool, name)
    async with engine.connect() as conn:
        # BEGIN READ ONLY, one round trip (asyncpg's own transaction start), rather than BEGIN
        # and then SET TRANSACTION READ ONLY; the pool resets it when the connection goes back.
        await conn.execution_options(postgresql_readonly=True)
        yield ReadConnection(conn)
        await conn.rollback()


class Database:
    """The process's engines: one for writes and one for reads, the same unless a replica is set
    (`DATABASE_READ_URL`); then `read` goes to the replica when it may (docs/adr/0032)."""

    def __init__(
        self,
        write_url: str,
        read_url: str | None = None,
        *,
        max_connections: int = 20,
        replica_max_lag_s: float = 10.0,
        replica_check_s: float = 2.0,
    ) -> None:
        self.write_engine = make_engine(write_url, max_connections=max_connections)
        # Side reads run beside a request's connection and must see what it sees: the primary's,
        # and the replica's for a search ranked there.
        self.side_reads = SideReads(write_url)
        self.replica: Replica | None = None
        self.replica_side_reads: SideReads | None = None
        self.read_engine = self.write_engine
        metrics.watch_pool(self.write_engine.pool, "write")
        if read_url:
            self.read_engine = make_engine(
                read_url, max_connections=max_connections, application_name="corpus-read"
            )
            self.replica = Replica(
                self.read_engine,
                self.write_engine,
                max_lag_s=replica_max_lag_s,
                check_s=replica_check_s,
            )
            self.replica_side_reads = SideReads(read_url, name="replica-side")
            metrics.watch_pool(self.read_engine.pool, "read")

    @asynccontextmanager
    async def write(self) -> AsyncIterator[WriteConnection]:
        """One transaction, committed when the block ends without an error."""
        metrics.asking_pool(self.write_engine.pool, "write")
        async with self.write_engine.connect() as conn:
            async with conn.begin():
                yield WriteConnection(ReadConnection(conn))
            if self.replica is not None:
                await self.replica.note_write(conn)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[ReadConnection]:
        """One read-only transaction: on the replica when it may serve the caller, else on
        the primary."""
        async with self.replica_read() as replica:
            if replica is not None:
                yield replica
                return
        async with _read_only(self.write_engine, "write") as conn:
            yield conn

    def read_primary(self) -> AbstractAsyncContextManager[ReadConnection]:
        """One read-only transaction on the primary, whoever asks: for a read that must see
        every commit, another caller's too (a credential just issued, the policy just edited,
        a consent a client has just asked for)."""
        return _read_only(self.write_engine, "write")

    @asynccontextmanager
    async def replica_read(self) -> AsyncIterator[ReadConnection | None]:
        """A read-only transaction on the replica, or None when the read must go to the
        primary: no replica, it is down or lagging, or it lacks the caller's last write."""
        replica = self.replica
        if replica is None:
            yield None
            return
        why, mark = replica.route()
        if why != "replica":
            metrics.db_read(why)
            yield None
            return
        opened = AsyncExitStack()
        try:
            conn = await opened.enter_async_context(_read_only(replica.engine, "read"))
            if mark is not None and not await replica.has_replayed(conn, mark):
                why = "own_write"
        except Exception as exc:
            await opened.aclose()
            if not unreachable(exc):
                raise
            replica.lost(exc)
            metrics.db_read("replica_down")
            yield None
            return
        metrics.db_read(why)
        if why != "replica":
            await opened.aclose()
            yield None
            return
        async with opened:
            yield conn

    async def dispose(self) -> None:
        await self.side_reads.dispose()
        if self.replica_side_reads is not None:
            await self.replica_side_reads.dispose()
        await self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            await self.read_engine.dispose()


class SideReads:
    """Second connections, for a statement a request runs while its own connection is busy with
    another: the keyword half of a long hybrid search (docs/adr/0015).

    At most `limit` at once, and only when one is free: a search apart keeps two cores busy, so
    when the searches in flight already fill the cores, the next ones run on their own
    connection alone, as one statement. By default one per two cores (of this host: the
    embedded server's too). The pool is as large as the limit, so a reserved connection never
    waits for another request's, and a request waiting for one cannot hold up the others.
    """

    def __init__(self, url: str, limit: int | None = None, *, name: str = "side") -> None:
        self.limit = limit if limit is not None else max(1, (os.cpu_count() or 2) // 2)
        self.engine = make_engine(url, max_connections=self.limit)
        self.name = name
        metrics.watch_pool(self.engine.pool, name)
        self._reserved = 0

    @asynccontextmanager
    async def reserve(self) -> AsyncIterator[SideRead | None]:
        """For the block: a side connection to open, or None when all `limit` are taken. The
        decision is made at once, without waiting."""
        if self._reserved >= self.limit:
            yield None
            return
        self._reserved += 1
        try:
            yield self.read
        finally:
            self._reserved -= 1

    def read(self) -> AbstractAsyncContextManager[ReadConnection]:
        """One read-only transaction on a side connection (reserve one first)."""
        return _read_only(self.engine, self.name)

    async def dispose(self) -> None:
        await self.engine.dispose()
