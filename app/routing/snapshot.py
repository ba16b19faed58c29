"""The policy snapshot: the admins' personas and every workspace row, kept in memory so that a
search the cache answers reads no table. It lives as long as a cached search (the cache's TTL)
and is dropped by any change notification and by an admin's edit in this process; a change
notified while it was being read keeps it from being kept."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from app.db.engine import Database
from app.routing import queries
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceTarget


@dataclass(frozen=True, slots=True)
class Snapshot:
    admin: dict[str, tuple[str, ...]]
    targets: list[WorkspaceTarget]
    expires_at: float


class Snapshots:
    """The process's current snapshot, read again when it expires or was dropped."""

    def __init__(self, ttl_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._current: Snapshot | None = None
        # Moves on at every drop: a read that began before one is not kept.
        self._epoch = 0

    def drop(self) -> None:
        self._current = None
        self._epoch += 1

    async def read(self, db: Database, *, fresh: bool = False) -> Snapshot:
        """The snapshot, from memory while it is fresh (unless `fresh`), else read in one short
        transaction (none is held while fanning out)."""
        current = self._current
        if not fresh and current is not None and current.expires_at > self._clock():
            return current
        epoch = self._epoch
        # On the primary: a replica behind the edit that dropped the snapshot would bring the
        # old policy back for the snapshot's whole life.
        async with db.read_primary() as conn:
            admin = await queries.admin_personas(conn)
            targets = await workspaces_service.every_workspace_target(conn)
        snapshot = Snapshot(admin, targets, self._clock() + self._ttl_s)
        # A change notified while this was read may not be in it: then it serves this request.
        if self._epoch == epoch:
            self._current = snapshot
        return snapshot
