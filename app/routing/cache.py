"""An in-process LRU cache with a TTL for fanned-out searches (DESIGN.md §5). An optimisation
only: entries are dropped when a workspace they cover changes (the `corpus_workspace_changed`
notification reaches every replica, this one included), and a search that started before such
a change does not store what it found (the workspace's generation moved on meanwhile)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from app.routing.schemas import CacheStats

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class _Entry(Generic[V]):
    value: V
    workspaces: frozenset[str]
    expires_at: float


@dataclass(frozen=True, slots=True)
class Generations:
    """The generations of some workspaces (and of the whole cache) when a search began."""

    epoch: int
    generations: tuple[int, ...]


class SearchCache(Generic[V]):
    """LRU with a TTL, invalidated by workspace. Capacity or TTL 0 turns it off."""

    def __init__(
        self, capacity: int, ttl_s: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.capacity = capacity
        self.ttl_s = ttl_s
        self._clock = clock
        self._entries: OrderedDict[Hashable, _Entry[V]] = OrderedDict()
        self._generations: dict[str, int] = {}
        self._epoch = 0
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.capacity > 0 and self.ttl_s > 0

    def get(self, key: Hashable) -> V | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at <= self._clock():
            del self._entries[key]
            entry = None
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry.value

    def generations(self, workspaces: Iterable[str]) -> Generations:
        return Generations(self._epoch, tuple(self._generations.get(w, 0) for w in workspaces))

    def put(self, key: Hashable, value: V, workspaces: Iterable[str], since: Generations) -> bool:
        """Store `value`, unless a workspace it covers changed since `since` was taken."""
        covered = list(workspaces)
        if not self.enabled or self.generations(covered) != since:
            return False
        self._entries[key] = _Entry(value, frozenset(covered), self._clock() + self.ttl_s)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return True

    def invalidate(self, workspace: str) -> int:
        """Drop every entry covering `workspace`; return how many."""
        self._generations[workspace] = self._generations.get(workspace, 0) + 1
        stale = [key for key, entry in self._entries.items() if workspace in entry.workspaces]
        for key in stale:
            del self._entries[key]
        return len(stale)

    def clear(self) -> None:
        """Drop everything: after a lost notification connection, changes may have been missed."""
        self._epoch += 1
        self._entries.clear()

    def stats(self) -> CacheStats:
        looked = self.hits + self.misses
        return CacheStats(
            size=len(self._entries),
            capacity=self.capacity,
            hits=self.hits,
            misses=self.misses,
            hit_rate=self.hits / looked if looked else 0.0,
            ttl_seconds=self.ttl_s,
        )
