"""Shared rate-limit benchmark: ``python -m bench.ratelimit [--calls N]``.

What admitting one call costs when keys and buckets live in PostgreSQL
(:class:`server.auth.Gate`, one ``kb_admit`` statement, as every server replica
does) against the same work in one process (the SHA-256 of the key, a dict
look-up and :class:`server.ratelimit.TokenBucketLimiter`), in one run:

1. one caller, calls one after another (the per-call overhead the limit is on);
2. three callers at once on one key (three replicas contending for one bucket);
3. three callers at once on three keys.

The limit: the shared gate's p50 at most 0.5 ms above the in-process one, for one
caller (the cost each call pays). The concurrent rows show contention on a small
machine: three callers and three database backends share its cores.
Results go to ``bench/results/ratelimit.json`` and a markdown table beside it.
"""

from __future__ import annotations

import os
import platform
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import RESULTS, bench_parser, write_results
from server.auth import Gate, KeyStore, digest
from server.ratelimit import TokenBucketLimiter
from sql.database import named_database, server_conninfo
from sql.settings import DatabaseSettings

DATABASE = "kb_bench_ratelimit"
OVERHEAD_LIMIT_MS = 0.5
UNLIMITED = {"minute": 10**9, "hour": 10**9, "day": 10**9}


def _timed(call: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter_ns()
        call()
        out.append((time.perf_counter_ns() - start) / 1e6)
    return out


def _in_process(keys: list[str]) -> Callable[[str], object]:
    """The in-process floor: what a server did before the buckets were shared."""
    known = {digest(k): f"id-{i}" for i, k in enumerate(keys)}
    limiter = TokenBucketLimiter(UNLIMITED)

    def admit(key: str) -> object:
        return limiter.check(known[digest(key)])

    return admit


def _concurrent(calls: list[Callable[[], object]], n: int) -> list[float]:
    """Each callable in its own thread, ``n`` times, started together."""
    times: list[list[float]] = [[] for _ in calls]
    barrier = threading.Barrier(len(calls))

    def worker(i: int) -> None:
        barrier.wait()
        times[i] = _timed(calls[i], n)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [x for part in times for x in part]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.ratelimit", __doc__)
    parser.add_argument("--calls", type=int, default=3000, help="calls per row [3000]")
    parser.add_argument("--out", type=Path, default=RESULTS / "ratelimit.json")
    args = parser.parse_args(argv)
    if args.calls < 100:
        parser.error("--calls must be at least 100")
    console = Console()
    db = named_database(server_conninfo(DatabaseSettings()), DATABASE)
    store = KeyStore(db)
    run = secrets.token_hex(4)
    keys = [store.create(f"bench-{run}-{i}") for i in range(3)]
    local = _in_process(keys)
    gates = [Gate(db, UNLIMITED, pool_size=1) for _ in range(3)]
    rows: list[dict[str, Any]] = []
    try:
        for gate in gates:  # warm: connections open, plans cached
            _timed(lambda g=gate: g.admit(keys[0]), 50)
        _timed(lambda: local(keys[0]), 50)
        # interleaved rounds, so that drift on this noisy machine hits both alike
        shared: list[float] = []
        floor: list[float] = []
        for _ in range(10):
            shared += _timed(lambda: gates[0].admit(keys[0]), args.calls // 10)
            floor += _timed(lambda: local(keys[0]), args.calls // 10)
        rows.append({"row": "one caller", "shared": shared, "in_process": floor, "limit": True})
        one_key = _concurrent([lambda g=g: g.admit(keys[0]) for g in gates], args.calls)
        one_key_local = _concurrent([lambda: local(keys[0]) for _ in gates], args.calls)
        rows.append({"row": "3 callers, one key", "shared": one_key, "in_process": one_key_local})
        three = _concurrent(
            [lambda g=g, k=k: g.admit(k) for g, k in zip(gates, keys, strict=True)], args.calls
        )
        three_local = _concurrent([lambda k=k: local(k) for k in keys], args.calls)
        rows.append({"row": "3 callers, three keys", "shared": three, "in_process": three_local})
    finally:
        for gate in gates:
            gate.close()
        for i in range(3):
            store.revoke(f"bench-{run}-{i}")

    table = Table(title="Admitting one call: shared (PostgreSQL) against in-process (ms)")
    for col in ("row", "shared p50", "shared p99", "in-process p50", "overhead p50", "limit"):
        table.add_column(col, justify="left" if col == "row" else "right")
    summary = []
    for r in rows:
        s50, s99 = statistics.median(r["shared"]), _p(r["shared"], 0.99)
        f50 = statistics.median(r["in_process"])
        over = s50 - f50
        limit = (
            f"{'met' if over <= OVERHEAD_LIMIT_MS else 'NOT met'} (≤ {OVERHEAD_LIMIT_MS})"
            if r.get("limit")
            else "(contention)"
        )
        table.add_row(r["row"], f"{s50:.3f}", f"{s99:.3f}", f"{f50:.4f}", f"{over:.3f}", limit)
        summary.append(
            {
                "row": r["row"],
                "calls": len(r["shared"]),
                "shared_p50_ms": round(s50, 4),
                "shared_p99_ms": round(s99, 4),
                "in_process_p50_ms": round(f50, 5),
                "overhead_p50_ms": round(over, 4),
                "limit_ms": OVERHEAD_LIMIT_MS if r.get("limit") else None,
            }
        )
    console.print(table)
    meta = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}",
        "database": db.description,
        "command": "python -m bench.ratelimit " + " ".join(argv or sys.argv[1:]),
    }
    write_results(args.out, {"meta": meta, "rows": summary})
    lines = [
        f"Command: `{meta['command'].strip()}` on {meta['when']}, {meta['machine']}.",
        "",
        "| row | calls | shared p50 (ms) | shared p99 | in-process p50 | overhead p50 | limit |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {s['row']} | {s['calls']} | {s['shared_p50_ms']:.3f} | {s['shared_p99_ms']:.3f} "
            f"| {s['in_process_p50_ms']:.4f} | {s['overhead_p50_ms']:.3f} "
            f"| {'≤ ' + str(s['limit_ms']) if s['limit_ms'] else 'contention'} |"
            for s in summary
        ],
        "",
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines))
    console.print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
