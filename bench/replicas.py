"""Server replicas under load: ``python -m bench.replicas [--replicas 1,2,3]``.

The same closed-loop clients as ``bench.load`` (real MCP sessions over streamable HTTP,
the full tool mix, one API key per client) against 1, 2 and 3 ``python -m server``
processes on one database (``kb_bench_load``, built from the bundled sample corpus),
client ``i`` talking to replica ``i % n``. Every replica admits each call through the
shared keys and rate limits in PostgreSQL, and reports its metrics there.

Reported per replica count, in one run: calls/s, latency p50 / p99, errors, and the CPU
seconds the server processes spent per answered call (``psutil``: user + system of every
replica, over the measured window). On a 2-core machine more replicas cannot add CPU,
so calls/s is not expected to grow; what must hold is that the CPU each call costs the
servers does not rise by more than 10 % over one replica (the shared state costs no
more per call when it is shared by more processes). Results: ``bench/results/replicas.json``
and ``replicas.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
from rich.console import Console
from rich.table import Table

from bench import RESULTS, machine
from bench.load.clients import run_clients
from bench.load.knowledge_base import DATABASE, build_knowledge_base, mix_from_database, probe_mix
from bench.load.server_process import ServerProcess
from bench.load.stats import summarize

#: The CPU per call of n replicas may exceed one replica's by this share at most.
CPU_RISE_LIMIT = 0.10


def _cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system
    return total


def measure(
    n: int,
    env: dict[str, str],
    keys: list[str],
    probe_key: str,
    mix: Any,
    *,
    clients: int,
    duration_s: float,
    workers: int,
    work: Path,
    console: Console,
) -> dict[str, Any]:
    """One replica count: start ``n`` servers, warm them, run the clients, stop them."""
    servers = [ServerProcess(env, work / f"server-{n}-{i}.log") for i in range(n)]
    try:
        for server in servers:  # warm-up: models loaded, pools open, mix valid everywhere
            anyio.run(probe_mix, server.url, probe_key, mix)
        urls = [s.url for s in servers]
        pids = [s.pid for s in servers]
        cpu_before = _cpu_s(pids)
        started = time.monotonic()
        records = anyio.run(
            lambda: run_clients(
                urls[0], keys, clients, duration_s, mix, workers=workers, urls=urls, seed=n
            )
        )
        wall = time.monotonic() - started
        cpu = _cpu_s(pids) - cpu_before
        alive = all(s.alive() for s in servers)
    finally:
        for server in servers:
            server.stop()
    stats = summarize(records, duration_s)
    ok = stats["ok"]
    row = {
        "replicas": n,
        "clients": clients,
        "duration_s": duration_s,
        "calls_per_s": stats["ok_per_s"],
        "latency_ms": stats["latency_ms"],
        "errors": stats["unintended_errors"],
        "server_cpu_s": round(cpu, 2),
        "server_cpu_ms_per_call": round(1000 * cpu / ok, 3) if ok else None,
        "wall_s": round(wall, 1),
        "servers_alive": alive,
        "tracebacks": sum(len(s.problems().get("tracebacks", [])) for s in servers),
    }
    console.print(
        f"  {n} replica(s): {row['calls_per_s']} calls/s, p99 {row['latency_ms']['p99']} ms, "
        f"server CPU {row['server_cpu_ms_per_call']} ms per call"
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.replicas",
        description=__doc__.split("\n\n")[0],
        epilog="Set DATABASE_URL to use another PostgreSQL (the embedded server otherwise).",
    )
    parser.add_argument("--replicas", default="1,2,3", help="replica counts [1,2,3]")
    parser.add_argument("--clients", type=int, default=24, help="clients per run [24]")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run [30]")
    parser.add_argument("--workers", type=int, default=2, help="client processes [2]")
    parser.add_argument("--database", default=DATABASE, help=f"benchmark database [{DATABASE}]")
    parser.add_argument("--out", type=Path, default=RESULTS / "replicas.json")
    args = parser.parse_args(argv)
    try:
        counts = [int(x) for x in args.replicas.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--replicas: comma-separated counts such as 1,2,3, not {args.replicas!r}")
    if not counts or min(counts) < 1 or max(counts) > 8:
        parser.error("--replicas: counts from 1 to 8")
    if args.clients < 1 or args.duration <= 0 or args.workers < 1:
        parser.error("--clients and --workers must be >= 1 and --duration > 0")

    from server.auth import KeyStore
    from sql.database import Database

    console = Console()
    conninfo = build_knowledge_base(args.database, console)
    mix = mix_from_database(conninfo)
    work = Path(tempfile.mkdtemp(prefix="kb-bench-replicas-"))
    store = KeyStore(Database(conninfo, None))
    run = f"replicas-{secrets.token_hex(4)}"
    probe_key = store.create(f"{run}-probe")
    keys = [store.create(f"{run}-client-{i}") for i in range(args.clients)]
    limit = str(10_000_000)  # the measured mix is never rate limited
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"} | {
        "DATABASE_URL": conninfo,
        "KB_API_KEYS_FILE": str(work / "keys.json"),
        "LOG_LEVEL": "WARNING",
        "BMCIS_RATE_LIMIT_MINUTE": limit,
        "BMCIS_RATE_LIMIT_HOUR": limit,
        "BMCIS_RATE_LIMIT_DAY": limit,
    }
    rows = []
    for n in counts:
        console.print(f"{n} replica(s), {args.clients} clients, {args.duration:g} s ...")
        rows.append(
            measure(
                n,
                env,
                keys,
                probe_key,
                mix,
                clients=args.clients,
                duration_s=args.duration,
                workers=args.workers,
                work=work,
                console=console,
            )
        )
    base = next((r for r in rows if r["replicas"] == 1), None)
    for r in rows:
        per_call, ref = r["server_cpu_ms_per_call"], base and base["server_cpu_ms_per_call"]
        r["cpu_per_call_ratio"] = round(per_call / ref, 3) if per_call and ref else None
        r["cpu_within_limit"] = (
            r["cpu_per_call_ratio"] <= 1 + CPU_RISE_LIMIT if r["cpu_per_call_ratio"] else None
        )
    table = Table(title=f"Server replicas on one database ({args.clients} clients)")
    for col in ("replicas", "calls/s", "p50 ms", "p99 ms", "errors", "CPU ms/call", "vs 1"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r["replicas"]),
            str(r["calls_per_s"]),
            str(r["latency_ms"]["p50"]),
            str(r["latency_ms"]["p99"]),
            str(sum(r["errors"].values())),
            str(r["server_cpu_ms_per_call"]),
            str(r["cpu_per_call_ratio"]),
        )
    console.print(table)
    result = {
        "machine": machine(),
        "settings": vars(args) | {"out": str(args.out)},
        "cpu_rise_limit": CPU_RISE_LIMIT,
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    md = [
        "| replicas | calls/s | p50 ms | p99 ms | errors | server CPU ms/call | vs 1 replica |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| {r['replicas']} | {r['calls_per_s']} | {r['latency_ms']['p50']} | "
            f"{r['latency_ms']['p99']} | {sum(r['errors'].values())} | "
            f"{r['server_cpu_ms_per_call']} | {r['cpu_per_call_ratio']} |"
            for r in rows
        ),
    ]
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n", encoding="utf-8")
    console.print(f"results written to {args.out} and {args.out.with_suffix('.md')}")
    failed = any(not r["servers_alive"] or r["tracebacks"] for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
