"""One run of the benchmark: the keys, the server and its sampler, the unmeasured
warm-up, the baseline, the target run and the escalation, then the results files."""

from __future__ import annotations

import json
import os
import platform
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import psutil
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from bench import REPO
from bench.load.clients import exhaust_key, open_session, run_clients
from bench.load.knowledge_base import (
    SAMPLE,
    build_knowledge_base,
    mix_from_database,
    probe_mix,
)
from bench.load.records import CANCELLED, SESSION, TIMEOUT, CallRecord, classify
from bench.load.report import escalation_summary, markdown, phase_line, phase_table, verdict_checks
from bench.load.sampler import ResourceSampler
from bench.load.server_process import ServerProcess
from bench.load.stats import (
    COLLAPSE,
    ERROR_RATE_LIMIT,
    P99_P50_LIMIT,
    RISING,
    assess,
    diagnosis,
    summarize,
)
from bench.load.workload import Mix


@dataclass
class Plan:
    baseline_s: float
    clients: int
    duration_s: float
    levels: list[int]
    level_s: float
    workers: int
    timeout_s: float
    warmup_s: float
    key_limit: int
    over_limit_rate: float
    max_run_s: float
    keep_going: bool
    seed: int
    strict: bool = False


def run_benchmark(plan: Plan, database: str, out: Path, command: str) -> int:
    """Run ``plan`` on the knowledge base ``database``; the results go to ``out`` and its
    ``.md`` twin, ``command`` is what they say ran. The exit status."""
    from server.auth import KeyStore
    from sql.database import Database

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)
    began = time.monotonic()
    conninfo = build_knowledge_base(database, console)
    mix = mix_from_database(conninfo)
    work = Path(tempfile.mkdtemp(prefix="kb-bench-load-"))
    keys_file = work / "keys.json"  # none: keys live in the database
    store = KeyStore(Database(conninfo, None))
    run = f"load-{secrets.token_hex(4)}"  # key names, unique to this run
    n_keys = max([plan.clients, *plan.levels])
    console.print(f"creating {n_keys + 3} API keys (one per client) ...")
    probe_key = store.create(f"{run}-probe")
    baseline_key = store.create(f"{run}-baseline")
    over_key = store.create(f"{run}-over-limit")
    client_keys = [store.create(f"{run}-client-{i}") for i in range(n_keys)]
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"} | {
        "DATABASE_URL": conninfo,
        "KB_API_KEYS_FILE": str(keys_file),
        "LOG_LEVEL": "WARNING",
        # every key may make key_limit calls in the whole run: the normal mix stays under it
        "BMCIS_RATE_LIMIT_MINUTE": str(plan.key_limit),
        "BMCIS_RATE_LIMIT_HOUR": str(plan.key_limit),
        "BMCIS_RATE_LIMIT_DAY": str(plan.key_limit),
    }
    console.print("starting the server ...")
    server = ServerProcess(env, work / "server.log")
    sampler = ResourceSampler(server.pid, database)
    sampler.start()
    phases: list[dict[str, Any]] = []
    escalation: dict[str, Any] = {
        "saturated_at": None,
        "saturation": [],
        "gave_at": None,
        "reasons": [],
        "diagnosis": [],
        "summary": "",
    }
    spent = 0
    dropped: list[str] = []
    try:
        mix, dropped = anyio.run(probe_mix, server.url, probe_key, mix)
        console.print(
            f"mix: {len(mix.vendors)} vendors, {len(mix.paths)} paths, "
            f"{len(mix.neighbors)} neighbourhoods, {len(mix.chunk_ids)} chunks"
            + (f"; {len(dropped)} entries refused at the probe" if dropped else "")
        )
        if plan.over_limit_rate > 0:
            console.print(
                f"warm-up (not measured): spending the over-limit key's {plan.key_limit} calls "
                "on the normal mix from 8 sessions ..."
            )
            t0 = time.monotonic()
            spent = anyio.run(_exhaust, server.url, over_key, plan.key_limit, mix, plan.seed)
            console.print(f"  {spent} calls in {time.monotonic() - t0:.0f} s")
        elif plan.warmup_s:
            console.print(f"warm-up (not measured): 1 client, {plan.warmup_s:g} s")
            anyio.run(_run_phase, server.url, [probe_key], 1, plan.warmup_s, mix, plan, 1, None)

        def phase(
            name: str, keys: list[str], n: int, seconds: float, workers: int
        ) -> dict[str, Any]:
            over = over_key if plan.over_limit_rate > 0 and n > 1 else None
            before = anyio.run(_server_calls, server.url, probe_key)
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            ) as progress:
                task = progress.add_task(f"{name}: {n} client(s)", total=seconds)
                stop = threading.Event()

                def tick() -> None:
                    t0 = time.monotonic()
                    while not stop.wait(0.5):
                        progress.update(task, completed=min(seconds, time.monotonic() - t0))

                ticker = threading.Thread(target=tick, daemon=True)
                ticker.start()
                try:
                    records = anyio.run(
                        _run_phase, server.url, keys, n, seconds, mix, plan, workers, over
                    )
                finally:
                    stop.set()
                    ticker.join()
            summary = summarize(records, seconds)
            t0 = min((r.start for r in records), default=time.time())
            resources = sampler.window(t0, t0 + seconds)
            if resources and summary["throughput_per_s"]:
                resources["cpu_ms_per_call"] = {
                    part: round(10 * resources[f"{part}_pct"] / summary["throughput_per_s"], 2)
                    for part in ("server", "clients", "postgres")
                }
            result: dict[str, Any] = {
                "name": name,
                "clients": n,
                "workers": workers,
                "duration_s": seconds,
                "summary": summary,
                "resources": resources,
                "server_alive": server.alive(),
                "server_work": None,
            }
            if server.alive() and before is not None:
                done = anyio.run(_server_calls_settled, server.url, probe_key, before)
                calls = [r for r in records if r.tool != SESSION]
                answered = [r for r in calls if r.outcome not in (TIMEOUT, CANCELLED)]
                result["server_work"] = {
                    "calls_sent": len(calls),
                    "answers_received": len(answered),
                    "calls_completed_by_server": done,
                    "completed_after_the_client_gave_up": max(0, done - len(answered)),
                }
            console.print(phase_table(name, result))
            console.print(phase_line(result), highlight=False)
            return result

        baseline = phase("baseline", [baseline_key], 1, plan.baseline_s, 1)
        phases.append(baseline)
        if baseline["summary"]["calls"] > 0.8 * plan.key_limit:
            console.print(
                f"[yellow]the baseline client made {baseline['summary']['calls']} of the "
                f"{plan.key_limit} calls its key may make: raise --key-limit[/]"
            )
        target = phase("target", client_keys, plan.clients, plan.duration_s, plan.workers)
        phases.append(target)
        previous = target
        best = max(baseline["summary"]["throughput_per_s"], target["summary"]["throughput_per_s"])
        for n in plan.levels:
            if time.monotonic() - began + plan.level_s + 60 > plan.max_run_s:
                escalation["summary"] = (
                    f"Stopped before {n} clients: --max-run-time {plan.max_run_s:g} s reached. "
                )
                break
            if not server.alive():
                escalation["summary"] = "The server process died. "
                break
            level = phase(f"escalation {n}", client_keys, n, plan.level_s, plan.workers)
            phases.append(level)
            broke, saturated = assess(level, previous, best, plan.timeout_s)
            best = max(best, level["summary"]["throughput_per_s"])
            if saturated and escalation["saturated_at"] is None:
                escalation["saturated_at"] = n
                escalation["saturation"] = saturated + diagnosis(level)
                console.print(f"saturated at {n} clients: {saturated[0]}", highlight=False)
            if broke and escalation["gave_at"] is None:
                escalation["gave_at"] = n
                escalation["reasons"] = broke
                escalation["diagnosis"] = diagnosis(level)
                console.print(f"[bold]It gave at {n} clients:[/]")
                for reason in broke + escalation["diagnosis"]:
                    console.print(f"  - {reason}", highlight=False)
                if not plan.keep_going:
                    break
            previous = level
    finally:
        sampler.stop()
        server.stop()
    escalation["summary"] += escalation_summary(escalation, phases)
    log = server.problems()
    kept_log = out.with_name(out.stem + "-server.log")
    if log["tracebacks"]:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(server.log_path, kept_log)
        log["log"] = str(kept_log)
        console.print(
            f"[red]{len(log['tracebacks'])} traceback(s) in the server log[/] "
            f"(kept as {kept_log}): " + "; ".join(sorted(set(log["tracebacks"]))[:5])
        )
    verdict = verdict_checks(phases[0], phases[1])
    console.print("[bold]Target run against the targets[/]")
    for check in verdict:
        mark = (
            "" if check["met"] is None else ("[green]met[/]" if check["met"] else "[red]missed[/]")
        )
        console.print(f"  {check['text']} {mark}", highlight=False)
    console.print(escalation["summary"], highlight=False)
    most = max(p["summary"]["max_calls_per_client"] for p in phases)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": command,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": psutil.cpu_count(),
            "cpus_physical": psutil.cpu_count(logical=False),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {
            **asdict(plan),
            "database": database,
            "corpus": str(SAMPLE.relative_to(REPO)),
            "calls_allowed_per_key": plan.key_limit,
            "over_limit_calls_spent": spent,
            "most_calls_by_one_client_in_a_phase": most,
            "server_env": {
                k: env[k] for k in sorted(env) if k.startswith(("BMCIS_RATE", "LOG_LEVEL"))
            },
            "targets": {
                "unintended_errors": 0,
                "p99_over_p50": P99_P50_LIMIT,
                "gives": {
                    "timeouts_above": 0,
                    "error_rate_above": ERROR_RATE_LIMIT,
                    "p99_over_p50_above": P99_P50_LIMIT,
                    "throughput_below_share_of_best": COLLAPSE,
                },
                "saturated": {"throughput_growth_below": RISING},
            },
        },
        "mix": {**mix.describe(), "dropped": dropped},
        "phases": phases,
        "verdict": verdict,
        "escalation": escalation,
        "server_log": log,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    out.with_suffix(".md").write_text(markdown(result))
    console.print(f"results: {out} and {out.with_suffix('.md')}")
    shutil.rmtree(work, ignore_errors=True)
    missed = any(c["met"] is False for c in verdict)
    return 1 if log["tracebacks"] or (plan.strict and missed) else 0


async def _run_phase(
    url: str,
    keys: list[str],
    n: int,
    seconds: float,
    mix: Mix,
    plan: Plan,
    workers: int,
    over_key: str | None,
) -> list[CallRecord]:
    return await run_clients(
        url,
        keys,
        n,
        seconds,
        mix,
        workers=workers,
        timeout_s=plan.timeout_s,
        over_limit_key=over_key,
        over_limit_rate=plan.over_limit_rate,
        seed=plan.seed * 7919 + n,
    )


async def _server_calls(url: str, key: str) -> int | None:
    """``total_calls`` of get_server_metrics (calls the server finished, this one not yet)."""
    async with open_session(url, key) as client:
        answer = classify(await client.call_tool("get_server_metrics", {}))
    results = (answer.envelope or {}).get("results")
    total = results.get("total_calls") if isinstance(results, dict) else None
    return total if isinstance(total, int) else None


async def _server_calls_settled(url: str, key: str, before: int, wait_s: float = 30.0) -> int:
    """Calls the server finished since ``before`` was read, once it has stopped finishing
    calls (the work of calls whose clients gave up included); the reads left out."""
    reads = 1  # the read that gave ``before``
    last = before
    deadline = time.monotonic() + wait_s
    while True:
        now = await _server_calls(url, key)
        reads += 1
        if now is None:
            break
        settled = now - last == 1  # nothing but the previous read finished in between
        last = now
        if settled or time.monotonic() > deadline:
            break
        await anyio.sleep(1.0)
    return last - before - (reads - 1)


async def _exhaust(url: str, key: str, limit: int, mix: Mix, seed: int) -> int:
    return await exhaust_key(url, key, limit=limit, mix=mix, concurrency=8, seed=seed)
