"""Clean-up the lifespan runs in the background: rows past their expiry are deleted, so that
tables anyone can add to (an /authorize request needs only a registered client, and each one
stores a consent transaction) do not grow without bound.

Every process runs it. The deletes are idempotent and touch only expired rows, so replicas need
no coordination, and a run that fails (the database restarting) is simply tried again at the
next interval.
"""

from __future__ import annotations

import asyncio
import logging
import socket

import psutil

from app.asking import records
from app.db.engine import Database
from app.oauth import service as oauth
from app.sessions import service as sessions_service
from app.sources import service as sources_service
from app.sources.sync import Syncs

logger = logging.getLogger(__name__)

# A source's schedule is in minutes (five at least): a look once a minute keeps it.
SCHEDULE_INTERVAL_S = 60.0

# Expired rows are already refused where they are read; deleting them is only about size, so
# once an hour is plenty.
INTERVAL_S = 3600.0


async def prune_expired(db: Database) -> dict[str, int]:
    """Delete expired sessions, consent transactions, codes and tokens in one transaction;
    returns how many rows went from each table."""
    async with db.write() as conn:
        counts = {"sessions": await sessions_service.prune_expired(conn)}
        counts |= await oauth.prune_expired(conn)
        # Not deleted: marked failed, so that their owner learns why (research_result).
        counts["abandoned research jobs"] = await records.fail_abandoned_jobs(conn)
        # At a restart after a kill, at once rather than when their leases run out.
        counts["research jobs of dead processes"] = await records.fail_jobs_of_dead_processes(
            conn, socket.gethostname(), psutil.pid_exists
        )
        counts["abandoned source syncs"] = await sources_service.fail_abandoned_runs(conn)
    return counts


async def run(db: Database, interval_s: float = INTERVAL_S) -> None:
    """Prune at once, then every `interval_s` seconds, until cancelled."""
    while True:
        try:
            counts = await prune_expired(db)
        except Exception as exc:
            # The type only: a driver's message can quote a statement's parameters.
            logger.warning(
                "pruning expired rows failed (%s); next try in %.0f s",
                type(exc).__name__,
                interval_s,
            )
        else:
            if any(counts.values()):
                logger.info(
                    "pruned expired rows: %s",
                    ", ".join(f"{table} {count}" for table, count in counts.items() if count),
                )
        await asyncio.sleep(interval_s)


async def sync_due_sources(
    db: Database, syncs: Syncs, interval_s: float = SCHEDULE_INTERVAL_S
) -> None:
    """Start the syncs whose schedule is due, every `interval_s` seconds, until cancelled.
    Every process looks; the source's lease lets one of them sync it."""
    while True:
        try:
            async with db.read() as conn:
                due = await sources_service.due_sources(conn)
        except Exception as exc:
            logger.warning("looking for scheduled syncs failed (%s)", type(exc).__name__)
        else:
            for source_id in due:
                syncs.start(source_id, "schedule")
        await asyncio.sleep(interval_s)
