"""Per-key rate limits in three tiers (minute, hour, day) as token buckets.

Each tier is a bucket of ``limit`` tokens refilled continuously at ``limit /
window`` per second; a request takes one token from every bucket and is
allowed only when all have one.

The server counts in PostgreSQL (``kb_admit``, used by
:class:`server.auth.Gate`), so that every replica shares the buckets.
:class:`TokenBucketLimiter` is the same arithmetic in one process: the
reference the database function is tested against, and the in-process floor
``bench.ratelimit`` measures the shared one's cost against.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

TIERS = (("minute", 60.0), ("hour", 3_600.0), ("day", 86_400.0))


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    remaining: dict[str, int]
    reset_in_seconds: int
    """Seconds until the exhausted tiers have a token again (0 when allowed)."""


class TokenBucketLimiter:
    """
    >>> now = [0.0]
    >>> rl = TokenBucketLimiter({"minute": 2, "hour": 10, "day": 100}, clock=lambda: now[0])
    >>> [rl.check("k").allowed for _ in range(3)]
    [True, True, False]
    >>> rl.check("k").reset_in_seconds
    30
    >>> now[0] = 30.0; rl.check("k").allowed
    True
    """

    def __init__(self, limits: dict[str, int], clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = dict(limits)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, dict[str, float]]] = {}

    def check(self, key: str) -> Decision:
        now = self._clock()
        with self._lock:
            full = {t: float(n) for t, n in self.limits.items()}
            last, levels = self._buckets.get(key, (now, full))
            windows = dict(TIERS)
            for tier, limit in self.limits.items():
                rate = limit / windows[tier]
                levels[tier] = min(float(limit), levels[tier] + (now - last) * rate)
            allowed = all(level >= 1.0 for level in levels.values())
            if allowed:
                for tier in levels:
                    levels[tier] -= 1.0
            self._buckets[key] = (now, levels)
            remaining = {t: math.floor(v) for t, v in levels.items()}
            wait = 0.0
            if not allowed:
                wait = max(
                    (1.0 - levels[t]) / (self.limits[t] / windows[t])
                    for t in levels
                    if levels[t] < 1.0
                )
        return Decision(allowed, remaining, math.ceil(wait))
