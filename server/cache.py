"""Answer caches: TTL plus least-recently-used eviction, behind a small interface.

The in-process implementation serves one server; several HTTP replicas would
share answers through a store such as Redis by implementing :class:`Cache`.
Every entry remembers the graph build it was computed on; a newer build makes
it a miss, so a rebuild that lands is never hidden by the cache.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol


class Cache(Protocol):
    def get(self, key: Hashable, build_id: int, *, count_miss: bool = True) -> Any | None: ...

    def put(self, key: Hashable, build_id: int, value: Any) -> None: ...

    def clear(self) -> None: ...


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class TTLCache:
    """Thread-safe TTL + LRU cache.

    >>> c = TTLCache(ttl=30, max_entries=2)
    >>> c.put("a", 1, "A"); c.get("a", 1), c.get("a", 2)
    ('A', None)
    """

    def __init__(
        self, ttl: float, max_entries: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.stats = CacheStats()
        self._clock = clock
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, tuple[float, int, Any]] = OrderedDict()

    def get(self, key: Hashable, build_id: int, *, count_miss: bool = True) -> Any | None:
        """The value put for ``key`` on ``build_id`` and not yet expired, or None.
        ``count_miss=False``: a probe whose miss the caller's next lookup counts."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None or entry[0] < self._clock() or entry[1] != build_id:
                if entry is not None:
                    del self._data[key]
                self.stats.misses += count_miss
                return None
            self._data.move_to_end(key)
            self.stats.hits += 1
            return entry[2]

    def put(self, key: Hashable, build_id: int, value: Any) -> None:
        if self.ttl <= 0 or self.max_entries <= 0:
            return
        with self._lock:
            self._data[key] = (self._clock() + self.ttl, build_id, value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)
                self.stats.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
