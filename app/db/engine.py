"""Engines, pools and the read/write connection types."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, NewType

from sqlalchemy import event
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

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

# Opens a connection on the primary whose every statement is its own transaction: for a
# credential's lookup, one statement that must see every commit (a key revoked a moment ago).
# `Database.lookup` is one; tests pass one that runs in their own transaction.
Lookup = Callable[[], AbstractAsyncContextManager[ReadConnection]]


CONNECT_TIMEOUT_S = 10
# A pooled connection idle for longer than this is pinged before it is handed out; one used
# more recently is handed out as it is (`_ping_when_idle`).
PING_AFTER_IDLE_S = 2.0


def make_engine(
    url: str,
    *,
    max_connections: int = 20,
    application_name: str = "corpus",
    ping_after_idle_s: float = PING_AFTER_IDLE_S,
) -> AsyncEngine:
    """An asyncpg engine with a pool that survives a restarted server (connections idle for
    `ping_after_idle_s` are pinged; 0: every one), opening at most `max_connections` (half kept
    open, half opened under load)."""
    pool_size = max(1, max_connections // 2)
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_connections - pool_size,
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
    event.listen(engine.sync_engine, "checkin", _note_checkin)
    event.listen(
        engine.sync_engine, "checkout", functools.partial(_ping_when_idle, ping_after_idle_s)
    )
    return engine


def _note_checkin(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info["checked_in"] = time.monotonic()


def _ping_when_idle(
    after_s: float, dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: Any
) -> None:
    """SQLAlchemy's `pool_pre_ping`, for connections that have been idle a while. The pre-ping
    pinged every checkout, and asyncpg's dialect pings with three round trips (BEGIN, an empty
    statement, ROLLBACK): a search over HTTP, with two checkouts (the credential's and the
    request's), paid six before doing anything (issue #33, docs/BENCHMARKS.md). A connection
    used within the last `PING_AFTER_IDLE_S` was alive then; a server restarted in that moment
    fails one request (a 503, `app.db.availability`), and the error invalidates the pool."""
    checked_in = record.info.get("checked_in")
    if checked_in is None or time.monotonic() - checked_in < after_s:
        return  # fresh, or used a moment ago
    try:
        dbapi_connection.ping()
    except Exception as error:
        # The pool replaces this connection (and, the server having gone, the others).
        raise InvalidatePoolError() from error


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
            # A replica's connections are pinged at every checkout: a standby that stopped is
            # found there, and its reads go to the primary instead of failing (ADR 0032).
            self.read_engine = make_engine(
                read_url,
                max_connections=max_connections,
                application_name="corpus-read",
                ping_after_idle_s=0,
            )
            self.replica = Replica(
                self.read_engine,
                self.write_engine,
                max_lag_s=replica_max_lag_s,
                check_s=replica_check_s,
            )
            self.replica_side_reads = SideReads(read_url, name="replica-side", ping_after_idle_s=0)
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

    @asynccontextmanager
    async def lookup(self) -> AsyncIterator[ReadConnection]:
        """A connection on the primary without a transaction around its statements (`Lookup`).
        A lookup in a transaction of its own cost three round trips (BEGIN, the SELECT,
        COMMIT) where one does; every request with a credential paid them."""
        metrics.asking_pool(self.write_engine.pool, "write")
        async with self.write_engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            yield ReadConnection(conn)

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

    def __init__(
        self,
        url: str,
        limit: int | None = None,
        *,
        name: str = "side",
        ping_after_idle_s: float = PING_AFTER_IDLE_S,
    ) -> None:
        self.limit = limit if limit is not None else max(1, (os.cpu_count() or 2) // 2)
        self.engine = make_engine(
            url, max_connections=self.limit, ping_after_idle_s=ping_after_idle_s
        )
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
