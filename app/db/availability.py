"""Telling "the database cannot be reached" from "a statement failed": the first is a 503 that
passes by itself (the pool pre-pings and reconnects), the second a bug and a 500."""

from __future__ import annotations

import errno
import socket

import asyncpg
from sqlalchemy import exc as sa_exc

# Connection-level failures: the server is down, starting, stopping, or out of connections.
_ASYNCPG_UNREACHABLE = (
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08
    asyncpg.CannotConnectNowError,  # 57P03: starting up or shutting down
    asyncpg.AdminShutdownError,  # 57P01
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.TooManyConnectionsError,  # 53300
)
# A connect call that failed at the network: asyncpg lets the socket's error through unwrapped.
_NETWORK_ERRNOS = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ETIMEDOUT})


def unreachable(error: BaseException) -> bool:
    """Whether `error` says that the database cannot be reached now (rather than that a
    statement was wrong). A group qualifies when every error in it does."""
    if isinstance(error, BaseExceptionGroup):
        return all(unreachable(inner) for inner in error.exceptions)
    if isinstance(error, sa_exc.TimeoutError):
        return True  # no connection came free in the pool's time
    if isinstance(error, sa_exc.DBAPIError):
        if error.connection_invalidated:
            return True
        # The dialect wraps asyncpg's error in an adapter; the original is its cause.
        original = error.orig.__cause__ if error.orig is not None else None
        return original is not None and unreachable(original)
    if isinstance(error, _ASYNCPG_UNREACHABLE):
        return True
    if isinstance(error, asyncpg.InterfaceError):
        return "connection is closed" in str(error)
    if isinstance(error, ConnectionError | socket.gaierror | TimeoutError):
        return _from_driver(error)
    return isinstance(error, OSError) and error.errno in _NETWORK_ERRNOS and _from_driver(error)


def _from_driver(error: BaseException) -> bool:
    # A socket error or a timeout elsewhere (a file, an embedding provider) is no outage of ours.
    traceback = error.__traceback__
    while traceback is not None:
        module = traceback.tb_frame.f_globals.get("__name__", "")
        if module.startswith(("asyncpg", "sqlalchemy")):
            return True
        traceback = traceback.tb_next
    return False
