"""Per-tool call counts, latency percentiles, cache hit rates and errors
(``get_server_metrics``)."""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict, deque
from typing import Any

WINDOW = 1_000  # latencies kept per tool for percentiles


def _percentile(ordered: list[float], q: float) -> float:
    """The ``q``-th percentile of ``ordered`` (sorted), interpolated linearly."""
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


class Metrics:
    """
    >>> m = Metrics()
    >>> m.record("semantic_search", 12.0, cache_hit=False, error=None)
    >>> m.snapshot()["tools"]["semantic_search"]["calls"]
    1
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.calls: Counter[str] = Counter()
        self.cache_hits: Counter[str] = Counter()
        self.errors: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.latency: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=WINDOW))

    def record(self, tool: str, ms: float, *, cache_hit: bool, error: str | None) -> None:
        with self._lock:
            self.calls[tool] += 1
            self.cache_hits[tool] += int(cache_hit)
            self.latency[tool].append(ms)
            if error:
                self.errors[tool][error] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            tools = {}
            for tool in sorted(self.calls):
                lat = sorted(self.latency[tool])  # once for every percentile
                tools[tool] = {
                    "calls": self.calls[tool],
                    "errors": dict(self.errors[tool]),
                    "cache_hit_rate": round(self.cache_hits[tool] / self.calls[tool], 4),
                    "latency_ms": {
                        "p50": round(_percentile(lat, 50), 3),
                        "p95": round(_percentile(lat, 95), 3),
                        "p99": round(_percentile(lat, 99), 3),
                        "max": round(lat[-1], 3),
                    },
                }
            return {
                "uptime_s": round(time.time() - self.started, 1),
                "total_calls": sum(self.calls.values()),
                "tools": tools,
            }
