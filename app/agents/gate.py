"""The gate every model call of the agents passes: the process's model calls at once, shared
fairly between people (docs/SECURITY.md, "Limits on answering"; `app.asking.limits` sizes it
from the settings)."""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

# A person is an account (`Principal.user_id`); callers with no account (the command line's
# operator) share one bucket of their own, `None`.
Person = UUID | None


class ModelGate:
    """At most `slots` model calls at once over the process. When every slot is taken, a freed
    slot goes to the waiting person who holds the fewest, and among equals to the one whose
    turn comes first, each person going to the back of the line once served (round-robin): one
    person's forty waiting calls do not keep another's one waiting behind them."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._held: Counter[Person] = Counter()
        # The people waiting, in turn order (a dict keeps insertion order), each with their
        # calls in the order they came.
        self._waiting: dict[Person, deque[asyncio.Future[None]]] = {}

    def held(self, person: Person) -> int:
        """The person's model calls under way."""
        return self._held[person]

    def waiting(self, person: Person) -> int:
        """The person's model calls waiting for a slot."""
        return len(self._waiting.get(person, ()))

    @asynccontextmanager
    async def call(self, person: Person) -> AsyncIterator[None]:
        """Hold a slot for one model call, waiting for one when none is free."""
        await self._acquire(person)
        try:
            yield
        finally:
            self._release(person)

    async def _acquire(self, person: Person) -> None:
        if not self._waiting and self._held.total() < self.slots:
            self._held[person] += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(person, deque()).append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release(person)  # given a slot as it was cancelled: hand it on
            else:
                self._forget(person, granted)
            raise

    def _forget(self, person: Person, granted: asyncio.Future[None]) -> None:
        calls = self._waiting.get(person)
        if calls is None:
            return
        if granted in calls:
            calls.remove(granted)
        if not calls:
            del self._waiting[person]

    def _release(self, person: Person) -> None:
        self._held[person] -= 1
        if self._held[person] <= 0:
            del self._held[person]
        while self._waiting and self._held.total() < self.slots:
            turn = list(self._waiting)
            nearest = min(turn, key=lambda p: (self._held[p], turn.index(p)))
            calls = self._waiting.pop(nearest)
            granted = calls.popleft()
            if calls:
                self._waiting[nearest] = calls  # back of the line
            if granted.cancelled():
                # Its call was cancelled and has not yet run to leave the line: pass it over.
                continue
            self._held[nearest] += 1
            granted.set_result(None)
