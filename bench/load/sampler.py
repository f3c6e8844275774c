"""Where the CPU goes during a phase: the server process, PostgreSQL's backends for the
benchmark database, the client processes and the whole machine (psutil, in a thread)."""

from __future__ import annotations

import math
import threading
import time
from contextlib import suppress
from typing import Any

import psutil


class ResourceSampler:
    """CPU seconds of the server process, of PostgreSQL's backends serving ``database``,
    of this process and its other children (the clients) and of the whole machine,
    sampled every ``interval_s`` in a thread."""

    def __init__(self, server_pid: int, database: str, interval_s: float = 0.5) -> None:
        self.server = psutil.Process(server_pid)
        self.database = database
        self.interval_s = interval_s
        self.samples: list[dict[str, float]] = []
        self._stop = threading.Event()
        self._pg: dict[int, psutil.Process] = {}
        self._pg_scanned = 0.0
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @staticmethod
    def _cpu(proc: psutil.Process) -> float:
        try:
            t = proc.cpu_times()
            return float(t.user + t.system)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return 0.0

    def _postgres(self) -> list[psutil.Process]:
        if time.time() - self._pg_scanned > 3:
            self._pg_scanned = time.time()
            for proc in psutil.process_iter(["name", "cmdline"]):
                try:
                    cmd = " ".join(proc.info["cmdline"] or [])
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if cmd.startswith("postgres:") and f" {self.database} " in f"{cmd} ":
                    self._pg.setdefault(proc.pid, proc)
        return list(self._pg.values())

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                server_rss = float(self.server.memory_info().rss)
                threads = float(self.server.num_threads())
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                server_rss = threads = math.nan
            server_tree = {self.server.pid}
            with suppress(psutil.NoSuchProcess):
                server_tree |= {c.pid for c in self.server.children(recursive=True)}
            clients = [me] + [c for c in me.children(recursive=True) if c.pid not in server_tree]
            sys_times = psutil.cpu_times()
            busy = sum(sys_times) - sys_times.idle - getattr(sys_times, "iowait", 0.0)
            self.samples.append(
                {
                    "t": time.time(),
                    "server": self._cpu(self.server),
                    "postgres": sum(self._cpu(p) for p in self._postgres()),
                    "clients": sum(self._cpu(p) for p in clients),
                    "system": busy,
                    "server_rss_mb": server_rss / 2**20,
                    "server_threads": threads,
                }
            )
            self._stop.wait(self.interval_s)

    def window(self, t0: float, t1: float) -> dict[str, Any] | None:
        """Mean CPU between ``t0`` and ``t1``: each part in % of one core, the machine in %
        of all its cores; the server's largest RSS and thread count."""
        inside = [s for s in self.samples if t0 <= s["t"] <= t1]
        if len(inside) < 2:
            return None
        a, b = inside[0], inside[-1]
        span = b["t"] - a["t"]
        if span <= 0:
            return None

        def pct(k: str) -> float:
            return round(100 * (b[k] - a[k]) / span, 1)

        cores = psutil.cpu_count() or 1
        return {
            "server_pct": pct("server"),
            "postgres_pct": pct("postgres"),
            "clients_pct": pct("clients"),
            "system_pct": round(pct("system") / cores, 1),
            "server_rss_mb_max": round(max(s["server_rss_mb"] for s in inside), 1),
            "server_threads_max": max(s["server_threads"] for s in inside),
        }
