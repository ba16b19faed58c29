"""Cross-replica cache invalidation: a connection of its own (outside the pool, which it would
otherwise hold for good) LISTENs on `corpus_workspace_changed`, which a trigger NOTIFYs when a
workspace or one of its documents changes (migration 0008). Every replica, this one included,
drops that workspace's cached searches when the writing transaction commits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import asyncpg
from sqlalchemy.engine import make_url

logger = logging.getLogger(__name__)

CHANNEL = "corpus_workspace_changed"
RECONNECT_S = 1.0


def asyncpg_dsn(url: str) -> str:
    """The SQLAlchemy URL as asyncpg takes it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _setting(event: asyncio.Event) -> Callable[[object], None]:
    return lambda _conn: event.set()


async def listen(
    url: str,
    on_change: Callable[[str], None],
    on_connect: Callable[[], None],
    *,
    connected: asyncio.Event | None = None,
) -> None:
    """Run until cancelled: call `on_change(workspace_id)` for each notification, and
    `on_connect()` on every (re)connection, since changes may have been missed meanwhile."""
    dsn = asyncpg_dsn(url)

    def received(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        on_change(payload)

    while True:
        lost = asyncio.Event()
        try:
            conn = await asyncpg.connect(dsn, timeout=10)
        except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
            logger.warning("cache invalidation: cannot listen (%s); retrying", type(exc).__name__)
            await asyncio.sleep(RECONNECT_S)
            continue
        try:
            conn.add_termination_listener(_setting(lost))
            await conn.add_listener(CHANNEL, received)
            on_connect()
            if connected is not None:
                connected.set()
            await lost.wait()
            logger.warning("cache invalidation: connection lost; reconnecting")
        except (OSError, asyncpg.PostgresError) as exc:
            logger.warning("cache invalidation: %s; reconnecting", type(exc).__name__)
        finally:
            if not conn.is_closed():
                await conn.close(timeout=2)
        if connected is not None:
            connected.clear()
        await asyncio.sleep(RECONNECT_S)
