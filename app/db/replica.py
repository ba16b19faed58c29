"""Reads on a streaming replica (`DATABASE_READ_URL`), and when they go to the primary instead
(docs/adr/0032).

- A caller reads their own writes: after a write transaction of theirs commits, the primary's
  WAL position (LSN) is remembered for them, and their reads go to the primary until the
  replica has replayed up to it (`pg_last_wal_replay_lsn()`); then the mark is dropped.
- A replica that cannot be reached, or that has not replayed what the primary had written
  `max_lag_s` ago, serves no reads: they fall back to the primary, with a log line and a
  metric, until a check finds it reachable and caught up again.

The marks live in this process's memory, keyed by the caller's account id (ADR 0032 says why
that is enough behind a proxy that keeps a caller on one process, and what happens when not).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Literal

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.logs import request_caller
from app.observe import metrics

logger = logging.getLogger(__name__)

# A WAL position as a number of bytes from the start, so that positions compare as integers.
# NULL from the replica function means "not a standby" (a DATABASE_READ_URL naming the primary
# itself, or a promoted replica): it has everything the primary has.
PRIMARY_LSN = text("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")
REPLAYED_LSN = text("SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint")

# Callers whose last write the replica may not have yet, at most: past it the oldest mark goes,
# which is the one the replica has most likely replayed already.
MAX_MARKS = 100_000

Why = Literal["replica", "own_write", "replica_down", "replica_lagging"]


def caller_key() -> str | None:
    """The account the current request (or a job it started) acts for, if any."""
    caller = request_caller.get()
    return caller.id if caller is not None else None


class Replica:
    """A replica's engine, whether it serves reads now, and the callers it cannot serve yet."""

    def __init__(
        self,
        engine: AsyncEngine,
        primary: AsyncEngine,
        *,
        max_lag_s: float,
        check_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self._primary = primary
        self.max_lag_s = max_lag_s
        self.check_s = check_s
        self._clock = clock
        # Why reads go to the primary whatever the caller; None while the replica serves them.
        # Assumed serving until a check or a connection says otherwise.
        self.down: Why | None = None
        self.replayed = 0  # the furthest replay position seen
        self._marks: OrderedDict[str, int] = OrderedDict()
        # The primary's position at each check, for the lag bound: (when, position).
        self._samples: deque[tuple[float, int]] = deque()
        metrics.replica_serving(True)

    # --- writes ----------------------------------------------------------------------------

    async def note_write(self, conn: AsyncConnection) -> None:
        """A write transaction of the current caller committed on `conn`: remember the
        primary's position for them. Never raises: the write is committed whatever happens
        here, and a caller who cannot be marked reads as anyone would."""
        key = caller_key()
        if key is None:
            return
        try:
            position = (await conn.execute(PRIMARY_LSN)).scalar_one()
            await conn.rollback()
        except (OSError, SQLAlchemyError) as exc:
            logger.info("replica: could not read the primary's WAL position: %s", exc)
            return
        self._marks[key] = max(position, self._marks.pop(key, 0))
        while len(self._marks) > MAX_MARKS:
            self._marks.popitem(last=False)

    # --- reads -----------------------------------------------------------------------------

    def route(self) -> tuple[Why, int | None]:
        """Where the current caller's read may go before looking at the replica: "replica"
        (with the position it must have replayed, if the caller wrote lately) or the reason
        it goes to the primary."""
        if self.down is not None:
            return self.down, None
        key = caller_key()
        mark = self._marks.get(key) if key is not None else None
        if key is not None and mark is not None and mark <= self.replayed:
            del self._marks[key]
            mark = None
        return "replica", mark

    async def has_replayed(self, conn: AsyncConnection, mark: int) -> bool:
        """Whether the replica behind `conn` has replayed up to `mark` (asked once, at the
        start of the read's transaction)."""
        replayed: int | None = (await conn.execute(REPLAYED_LSN)).scalar_one()
        if replayed is None:
            return True
        self.replayed = max(self.replayed, replayed)
        return replayed >= mark

    def lost(self, error: BaseException) -> None:
        """A read could not reach the replica: reads go to the primary until a check finds
        it again."""
        self._fall_back("replica_down", f"unreachable ({type(error).__name__}: {error})")

    # --- the watch -------------------------------------------------------------------------

    async def watch(self) -> None:
        """Check the replica every `check_s` seconds, for as long as the process runs."""
        while True:
            await self.check()
            await asyncio.sleep(self.check_s)

    async def check(self) -> None:
        """Look at both servers once: is the replica reachable, and how far behind is it?"""
        try:
            async with self._primary.connect() as conn:
                primary = (await conn.execute(PRIMARY_LSN)).scalar_one()
        except (OSError, SQLAlchemyError):
            return  # the primary's own trouble: nothing to learn about the replica now
        now = self._clock()
        self._samples.append((now, primary))
        # The newest sample older than the bound is the position the replica must have passed.
        while len(self._samples) > 1 and self._samples[1][0] <= now - self.max_lag_s:
            self._samples.popleft()
        try:
            async with self.engine.connect() as conn:
                replayed = (await conn.execute(REPLAYED_LSN)).scalar_one()
        except (OSError, SQLAlchemyError) as exc:
            self._fall_back("replica_down", f"unreachable ({type(exc).__name__})")
            return
        if replayed is None:  # not a standby: it has every commit
            replayed = primary
        self.replayed = max(self.replayed, replayed)
        metrics.replica_lag(max(0, primary - replayed))
        for key in [key for key, mark in self._marks.items() if mark <= replayed]:
            del self._marks[key]
        oldest_at, oldest = self._samples[0]
        if oldest_at <= now - self.max_lag_s and replayed < oldest:
            self._fall_back(
                "replica_lagging",
                f"it has not replayed what the primary wrote {self.max_lag_s:g} s ago",
            )
            return
        if self.down is not None:
            logger.warning("replica: reachable and caught up again; reads go to it")
            self.down = None
            metrics.replica_serving(True)

    def _fall_back(self, why: Why, detail: str) -> None:
        if self.down != why:
            logger.warning("replica: reads fall back to the primary: %s", detail)
        self.down = why
        metrics.replica_serving(False)
