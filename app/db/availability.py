"""Telling "the database cannot be reached" from "a statement failed": the first is a 503 that
passes by itself (the pool pings idle connections and reconnects, ADR 0037), the second a bug
and a 500.

The one place that decides it, for every door (`app.middleware.UnavailableMiddleware`). It goes
by what failed, never by what the error says: the same outage reaches us as a socket error
(refused over TCP, no socket file at all when a local server stopped), as PostgreSQL's refusal
while it shuts down or starts, as a connection cut mid-statement, or as one of these wrapped by
SQLAlchemy's dialect, so the chain of causes is walked until one of them tells.
"""

from __future__ import annotations

from collections.abc import Iterator

import asyncpg
from sqlalchemy import exc as sa_exc

# What a caller is told, at every door.
DATABASE_UNREACHABLE = "the database is unreachable; try again shortly"

# Connection-level failures: the server is down, starting, stopping, or out of connections.
_ASYNCPG_UNREACHABLE = (
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08, a lost connection included
    asyncpg.CannotConnectNowError,  # 57P03: starting up, shutting down, in recovery
    asyncpg.AdminShutdownError,  # 57P01
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.TooManyConnectionsError,  # 53300
)
# The same, by SQLSTATE: a driver error we do not name above (or the dialect's adapter of one)
# still carries its state.
_UNREACHABLE_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})
# How far down a chain of causes to look: chains are a few links long; a cycle ends sooner.
_MAX_LINKS = 16


def unreachable(error: BaseException) -> bool:
    """Whether `error` says that the database cannot be reached now (rather than that a
    statement was wrong): it, or an error that caused it, is a connection's failure. A group
    qualifies when every error in it does."""
    if isinstance(error, BaseExceptionGroup):
        return all(unreachable(inner) for inner in error.exceptions)
    return any(_connection_failed(link) for link in _causes(error))


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error`, then what led to it: a DBAPI error's original, each `__cause__`, and each
    `__context__` a `raise ... from` did not replace."""
    seen: set[int] = set()
    pending = [error]
    while pending and len(seen) < _MAX_LINKS:
        link = pending.pop(0)
        if id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        if isinstance(link, sa_exc.DBAPIError) and isinstance(link.orig, BaseException):
            pending.append(link.orig)
        if link.__cause__ is not None:
            pending.append(link.__cause__)
        elif link.__context__ is not None and not link.__suppress_context__:
            pending.append(link.__context__)


def _connection_failed(error: BaseException) -> bool:
    if isinstance(error, sa_exc.TimeoutError):
        return True  # no connection came free in the pool's time
    if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, _ASYNCPG_UNREACHABLE):
        return True
    state = getattr(error, "sqlstate", None)
    if isinstance(state, str) and (state.startswith("08") or state in _UNREACHABLE_STATES):
        return True
    if isinstance(error, asyncpg.InterfaceError):
        return "connection is closed" in str(error)
    # Any socket error on the way to the server or back (refused, reset, no such socket file,
    # unreachable network, name not resolved, timed out): asyncpg lets it through unwrapped.
    return isinstance(error, OSError) and _from_driver(error)


def _from_driver(error: BaseException) -> bool:
    # A socket error or a timeout elsewhere (a file, an embedding provider) is no outage of ours.
    traceback = error.__traceback__
    while traceback is not None:
        module = traceback.tb_frame.f_globals.get("__name__", "")
        if module.startswith(("asyncpg", "sqlalchemy")):
            return True
        traceback = traceback.tb_next
    return False
