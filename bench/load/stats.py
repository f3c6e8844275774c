"""Statistics of the call records: per phase, tool and mode (:func:`summarize`), whether an
escalation level gave or saturated (:func:`assess`), and where its time went
(:func:`diagnosis`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import psutil

from bench.load.records import INTENDED, SESSION, TIMEOUT, TOOLS, CallRecord
from search.metrics import percentile

P99_P50_LIMIT = 5.0
ERROR_RATE_LIMIT = 0.01
RISING = 1.05  # throughput must grow by 5 % per escalation step to count as rising
COLLAPSE = 0.75  # below this share of the best throughput so far the server gave


def _latency_stats(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
        "mean": round(sum(values) / len(values), 2),
    }


def _group_stats(records: Sequence[CallRecord]) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "calls": len(records),
        "ok": sum(r.ok for r in records),
        **_latency_stats([r.latency_ms for r in records]),
    }
    p50, p99 = stats["p50"], stats["p99"]
    stats["p99_p50"] = round(p99 / p50, 2) if p50 and p99 is not None else None
    stats["errors"] = dict(Counter(r.outcome for r in records if not r.ok).most_common())
    hits = [r.cache_hit for r in records if r.ok and r.cache_hit is not None]
    stats["cache_hit_share"] = round(sum(hits) / len(hits), 3) if hits else None
    inside = [r.server_ms for r in records if r.server_ms is not None]
    stats["server_ms"] = _latency_stats(inside) if inside else None
    return stats


def summarize(records: Sequence[CallRecord], duration_s: float | None = None) -> dict[str, Any]:
    """Statistics of one phase's records.

    Throughput counts the normal clients' calls that ended within ``duration_s`` of the
    first call's start (without ``duration_s``: all calls over the span they cover).
    Latency percentiles, per tool and per tool and mode, cover every call of the normal
    clients, failed ones included (a timeout counts with its full wait). Errors are
    counted by code: ``unintended`` is every failure except RATE_LIMIT on the
    over-limit key, which is ``intended``."""
    normal = [r for r in records if not r.over_limit]
    over = [r for r in records if r.over_limit]
    if not records:
        start = end = 0.0
    else:
        start = min(r.start for r in records)
        end = max(r.end for r in records)
    window = duration_s if duration_s is not None else max(end - start, 1e-9)
    in_window = [r for r in normal if r.end <= start + window]
    unintended = Counter(r.outcome for r in records if not r.ok and not r.intended)
    intended = Counter(r.outcome for r in records if r.intended)
    tools: dict[str, Any] = {}
    for tool in [*TOOLS, SESSION]:
        group = [r for r in normal if r.tool == tool]
        if group:
            tools[tool] = _group_stats(group)
    modes: dict[str, Any] = {}
    for key in sorted({(r.tool, r.mode) for r in normal}, key=lambda k: (_tool_order(k[0]), k)):
        group = [r for r in normal if (r.tool, r.mode) == key]
        modes[f"{key[0]} {key[1]}" if key[1] != "-" else key[0]] = _group_stats(group)
    per_client = Counter(r.client for r in normal if r.tool != SESSION)
    hits = [r.cache_hit for r in normal if r.ok and r.cache_hit is not None]
    total = len(records)
    return {
        "clients": len({r.client for r in normal}),
        "duration_s": round(window, 3),
        "calls": len(normal),
        "ok": sum(r.ok for r in normal),
        "throughput_per_s": round(len(in_window) / window, 2) if window else None,
        "ok_per_s": round(sum(r.ok for r in in_window) / window, 2) if window else None,
        "latency_ms": _latency_stats([r.latency_ms for r in normal]),
        "unintended_errors": dict(unintended.most_common()),
        "unintended_error_count": sum(unintended.values()),
        "error_rate": round(sum(unintended.values()) / total, 5) if total else 0.0,
        "intended_errors": dict(intended.most_common()),
        "timeouts": unintended.get(TIMEOUT, 0),
        "cache_hit_share": round(sum(hits) / len(hits), 3) if hits else None,
        "max_calls_per_client": max(per_client.values()) if per_client else 0,
        "tools": tools,
        "modes": modes,
        "over_limit": {
            "calls": len(over),
            "rate_limited": intended.get(INTENDED, 0),
            "ok": sum(r.ok for r in over),
            "other": sum(1 for r in over if not r.ok and not r.intended),
        },
    }


def _tool_order(tool: str) -> int:
    return TOOLS.index(tool) if tool in TOOLS else len(TOOLS)


def assess(
    phase: dict[str, Any], previous: dict[str, Any], best_throughput: float, timeout_s: float
) -> tuple[list[str], list[str]]:
    """(broke, saturated) of an escalation phase against the one before it.

    It *gave* when: a call timed out; unintended errors exceed 1 % of calls; a tool's p99
    exceeds 5 x its p50; throughput collapsed below 3/4 of the best phase so far; or the
    server process died. It is *saturated* (noted, the escalation goes on) when throughput
    rose by less than 5 % over the previous phase."""
    s, before = phase["summary"], previous["summary"]
    broke: list[str] = []
    if not phase.get("server_alive", True):
        broke.append("the server process died")
    if s["timeouts"]:
        tools = Counter(
            tool for tool, t in s["tools"].items() for _ in range(t["errors"].get(TIMEOUT, 0))
        )
        broke.append(
            f"{s['timeouts']} calls timed out after {timeout_s:g} s "
            f"({', '.join(f'{t} {n}' for t, n in tools.most_common())})"
        )
    if s["error_rate"] > ERROR_RATE_LIMIT:
        where = "; ".join(
            f"{tool}: {', '.join(f'{c} {n}' for c, n in t['errors'].items())}"
            for tool, t in s["tools"].items()
            if t["errors"]
        )
        broke.append(
            f"unintended errors {s['error_rate']:.1%} of calls (limit {ERROR_RATE_LIMIT:.0%}): "
            + where
        )
    for tool, t in s["tools"].items():
        if tool != SESSION and t["p99_p50"] is not None and t["p99_p50"] > P99_P50_LIMIT:
            broke.append(
                f"{tool} p99/p50 = {t['p99_p50']:.1f} (limit {P99_P50_LIMIT:g}): "
                f"p50 {t['p50']:.0f} ms, p99 {t['p99']:.0f} ms"
            )
    growth = s["throughput_per_s"] / before["throughput_per_s"] if before["throughput_per_s"] else 0
    change = (
        f"{before['throughput_per_s']:.0f} -> {s['throughput_per_s']:.0f} calls/s "
        f"(x{growth:.2f}) with x{s['clients'] / before['clients']:.1f} clients; median "
        f"latency {fmt(before['latency_ms']['p50'], 0)} -> {fmt(s['latency_ms']['p50'], 0)} ms"
    )
    if s["throughput_per_s"] < COLLAPSE * best_throughput:
        broke.append(
            f"throughput collapsed below {COLLAPSE:.0%} of the best phase "
            f"({best_throughput:.0f} calls/s): {change}"
        )
    saturated = [f"throughput no longer rising: {change}"] if growth < RISING else []
    return broke, saturated


def diagnosis(phase: dict[str, Any]) -> list[str]:
    """Where the time went in a phase: CPU of each part, and the time inside the server's
    tool code (``execution_time_ms``) next to the latency the clients saw."""
    out: list[str] = []
    r = phase.get("resources")
    if r:
        cores = psutil.cpu_count() or 1
        line = (
            f"CPU: server process {r['server_pct']:.0f} %, PostgreSQL backends "
            f"{r['postgres_pct']:.0f} %, client processes {r['clients_pct']:.0f} % of one core; "
            f"the machine {r['system_pct']:.0f} % of {cores} cores"
        )
        per_call = r.get("cpu_ms_per_call")
        if per_call:
            line += (
                f"; per call: server {per_call['server']:.1f} ms, clients "
                f"{per_call['clients']:.1f} ms, PostgreSQL {per_call['postgres']:.1f} ms of CPU"
            )
        if r["server_pct"] >= 80:
            line += " - the server process is CPU-bound (one Python process, one GIL)"
        elif r["system_pct"] >= 90:
            line += (
                " - the machine's CPUs are saturated (server, PostgreSQL and clients share them)"
            )
        out.append(line)
    work = phase.get("server_work")
    if work and phase["summary"]["timeouts"]:
        out.append(
            f"the server finished {work['calls_completed_by_server']} calls for the "
            f"{work['calls_sent']} the clients sent, {work['completed_after_the_client_gave_up']}"
            f" of them after the client had given up ({phase['summary']['timeouts']} timed out)"
        )
    pairs = [
        f"{tool} {t['server_ms']['p50']:.1f} / {t['p50']:.1f} ms"
        for tool, t in phase["summary"]["tools"].items()
        if t.get("server_ms") and t["p50"] is not None
    ]
    if pairs:
        out.append(
            "p50 inside the server's tool code (execution_time_ms) / seen by the clients: "
            + ", ".join(pairs)
            + " (the rest is the MCP and HTTP layers on both sides, queueing for the server's "
            "event loop and worker threads, and waiting for a CPU)"
        )
    return out


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
