"""The last user message of each session, for `POST /api/context` by session alone: kept per
process, like the search cache (a client asks the replica it told, or sends the query). Each
caller has a share of its own, so that one caller's flood pushes out its own messages only, and
a message is bounded where it is accepted (CORPUS_MAX_QUERY_CHARS, as when it is used): the
store holds at most SESSION_MESSAGES such messages, whoever sends them."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from uuid import UUID

SESSION_MESSAGES = 10_000
SESSION_MESSAGES_PER_CALLER = 1_000
SESSION_MESSAGE_TTL_S = 3600


class SessionMessages:
    """The last user message of each caller's sessions, for `ttl_s`: at most `per_caller`
    sessions a caller (its oldest go first) and `capacity` in all. When the whole store is full,
    a new message pushes out the oldest of the caller holding the most (the sender's own when it
    holds as many): a caller can take another's place only while it holds fewer than them."""

    def __init__(
        self,
        *,
        capacity: int,
        per_caller: int,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._capacity = capacity
        self._per_caller = per_caller
        self._ttl_s = ttl_s
        self._clock = clock
        # Each caller's sessions, oldest first (every message lives as long: also by expiry).
        self._callers: dict[UUID | None, OrderedDict[str, tuple[str, float]]] = {}
        self._size = 0

    def put(self, caller: UUID | None, session_id: str, text: str) -> None:
        now = self._clock()
        mine = self._callers.setdefault(caller, OrderedDict())
        if mine.pop(session_id, None) is not None:
            self._size -= 1
        mine[session_id] = (text, now + self._ttl_s)
        self._size += 1
        while len(mine) > self._per_caller:
            self._drop_oldest(caller)
        if self._size > self._capacity:
            for other in list(self._callers):
                self._drop_expired(other, now)
        while self._size > self._capacity:
            largest = max(self._callers, key=lambda other: len(self._callers[other]))
            if len(self._callers.get(caller, ())) >= len(self._callers[largest]):
                largest = caller
            self._drop_oldest(largest)

    def get(self, caller: UUID | None, session_id: str) -> str | None:
        held = self._callers.get(caller)
        found = held.get(session_id) if held is not None else None
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    def _drop_oldest(self, caller: UUID | None) -> None:
        held = self._callers[caller]
        held.popitem(last=False)
        self._size -= 1
        if not held:
            del self._callers[caller]

    def _drop_expired(self, caller: UUID | None, now: float) -> None:
        held = self._callers[caller]
        while caller in self._callers and next(iter(held.values()))[1] <= now:
            self._drop_oldest(caller)


def session_messages() -> SessionMessages:
    """The process's store, at the bounds above (read when it is made, so a test can set them)."""
    return SessionMessages(
        capacity=SESSION_MESSAGES,
        per_caller=SESSION_MESSAGES_PER_CALLER,
        ttl_s=SESSION_MESSAGE_TTL_S,
    )
