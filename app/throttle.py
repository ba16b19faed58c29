"""Throttles: how many times a key (a client address, "all") may act in a moving window.

The counts live in the process's memory (the `limits` package's moving window), so each
process throttles on its own: N processes admit N times the rate. That bounds what one burst
can cost a process, which is the point; a shared budget would need a store every process
reaches, and the database is what a burst must not reach.
"""

from __future__ import annotations

import math
import time

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from app.observe import metrics


class Throttle:
    """A rate such as "10/minute", counted per key."""

    def __init__(self, rate: str) -> None:
        self.rate = rate
        self._item = parse(rate)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, *key: str) -> int | None:
        """Count one attempt for `key`; None when it is allowed, else the seconds to wait
        before the window admits another (at least 1)."""
        if self._limiter.hit(self._item, *key):
            return None
        # The key's first part names what is counted ("address", "all", "register").
        metrics.throttle_refused(key[0] if key else "throttle")
        reset_at, _remaining = self._limiter.get_window_stats(self._item, *key)
        return max(1, math.ceil(reset_at - time.time()))
