"""The results: each phase's console table and summary line, the target run against its
targets, and the markdown report (``bench/results/load.md``)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from bench.load.records import SESSION
from bench.load.stats import P99_P50_LIMIT, diagnosis, fmt


def phase_table(name: str, phase: dict[str, Any]) -> Table:
    s = phase["summary"]
    table = Table(
        title=(
            f"{name}: {s['clients']} client(s), {s['duration_s']:.0f} s, "
            f"{s['throughput_per_s']:.1f} calls/s, latency ms"
        )
    )
    table.add_column("tool", no_wrap=True)
    for col in ("calls", "p50", "p95", "p99", "p99/p50", "cache hits"):
        table.add_column(col, justify="right")
    table.add_column("errors by code")
    for tool, t in s["tools"].items():
        table.add_row(*_tool_cells(tool, t))
    table.add_row(*_tool_cells("all", {**s["latency_ms"], **_overall(s)}), style="bold")
    return table


def _overall(s: dict[str, Any]) -> dict[str, Any]:
    p50, p99 = s["latency_ms"]["p50"], s["latency_ms"]["p99"]
    return {
        "calls": s["calls"],
        "p99_p50": round(p99 / p50, 2) if p50 else None,
        "cache_hit_share": s["cache_hit_share"],
        "errors": s["unintended_errors"],
    }


def _tool_cells(tool: str, t: dict[str, Any]) -> list[str]:
    ratio = t.get("p99_p50")
    ratio_text = fmt(ratio)
    if ratio is not None and ratio > P99_P50_LIMIT:
        ratio_text += " !"
    hit = t.get("cache_hit_share")
    return [
        tool,
        str(t["calls"]),
        fmt(t["p50"]),
        fmt(t["p95"]),
        fmt(t["p99"]),
        ratio_text,
        "-" if hit is None else f"{hit:.0%}",
        ", ".join(f"{c} {n}" for c, n in t["errors"].items()) or "0",
    ]


def phase_line(phase: dict[str, Any]) -> str:
    s = phase["summary"]
    o = s["over_limit"]
    parts = [
        f"{phase['name']}: {s['calls']} calls, {s['throughput_per_s']:.1f} calls/s",
        f"p50 {fmt(s['latency_ms']['p50'])} / p99 {fmt(s['latency_ms']['p99'])} ms",
        f"unintended errors {s['unintended_error_count']}",
        "cache hits "
        + ", ".join(
            f"{label} {t['cache_hit_share']:.0%}"
            for tool, label in (("semantic_search", "search"), ("find_vendor_info", "vendor"))
            if (t := s["tools"].get(tool)) and t["cache_hit_share"] is not None
        )
        + f" (all answers {fmt(100 * (s['cache_hit_share'] or 0), 0)} %)",
    ]
    if o["calls"]:
        parts.append(f"over-limit key: {o['rate_limited']} of {o['calls']} RATE_LIMIT (intended)")
    r = phase.get("resources")
    if r:
        parts.append(
            f"CPU server {r['server_pct']:.0f} %, postgres {r['postgres_pct']:.0f} %, "
            f"clients {r['clients_pct']:.0f} % of a core; machine {r['system_pct']:.0f} %"
        )
    return "; ".join(parts)


def verdict_checks(baseline: dict[str, Any], target: dict[str, Any]) -> list[dict[str, Any]]:
    s, b = target["summary"], baseline["summary"]
    checks: list[dict[str, Any]] = [
        {
            "check": "errors other than intended rate limits",
            "value": s["unintended_error_count"],
            "limit": 0,
            "text": (
                f"unintended errors = {s['unintended_error_count']} (limit 0)"
                + (f": {s['unintended_errors']}" if s["unintended_errors"] else "")
                + f"; intended RATE_LIMIT = {s['over_limit']['rate_limited']}"
            ),
            "met": s["unintended_error_count"] == 0,
        }
    ]
    for tool, t in s["tools"].items():
        if tool == SESSION:
            continue
        checks.append(
            {
                "check": f"{tool} p99 <= 5 x p50",
                "value": t["p99_p50"],
                "limit": P99_P50_LIMIT,
                "text": f"{tool} p99/p50 = {fmt(t['p99_p50'])} (limit {P99_P50_LIMIT:g})",
                "met": t["p99_p50"] is not None and t["p99_p50"] <= P99_P50_LIMIT,
            }
        )
    ratio = s["throughput_per_s"] / b["throughput_per_s"] if b["throughput_per_s"] else None
    checks.append(
        {
            "check": "throughput against the single-client baseline",
            "value": round(ratio, 2) if ratio else None,
            "limit": None,
            "text": (
                f"throughput {s['clients']} clients / 1 client = {fmt(ratio, 2)}x "
                f"({s['throughput_per_s']:.1f} / {b['throughput_per_s']:.1f} calls/s)"
            ),
            "met": None,
        }
    )
    return checks


def markdown(result: dict[str, Any]) -> str:
    md = [
        f"# MCP server under load ({result['date']})",
        "",
        f"`{result['command']}` on {result['machine']['cpus']} CPUs "
        f"({result['machine']['platform']}); knowledge base `{result['settings']['database']}` "
        f"(the sample corpus); {result['settings']['workers']} client worker processes; "
        f"per-call timeout {result['settings']['timeout_s']:g} s; cache hits are "
        "`execution_context.cache_hit` of successful calls.",
        "",
    ]
    for phase in result["phases"]:
        s = phase["summary"]
        md += [
            f"## {phase['name']}: {s['clients']} client(s), {s['duration_s']:.0f} s",
            "",
            phase_line(phase),
            "",
            "| tool | calls | p50 ms | p95 ms | p99 ms | p99/p50 | cache hits | errors by code |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for tool, t in s["tools"].items():
            md.append("| " + " | ".join(_tool_cells(tool, t)) + " |")
        md.append(
            "| **all** | "
            + " | ".join(_tool_cells("all", {**s["latency_ms"], **_overall(s)})[1:])
            + " |"
        )
        md.append("")
        if phase["name"] == "target":
            md += [
                "By tool and mode:",
                "",
                "| tool and mode | calls | p50 ms | p95 ms | p99 ms | p99/p50 | cache hits "
                "| errors by code |",
                "|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            md += ["| " + " | ".join(_tool_cells(k, t)) + " |" for k, t in s["modes"].items()]
            md.append("")
        md += [f"{line}" for line in diagnosis(phase)]
        md.append("")
    md += ["## Verdict (target run against its targets)", ""]
    for check in result["verdict"]:
        mark = "" if check["met"] is None else (" - met" if check["met"] else " - **missed**")
        md.append(f"- {check['text']}{mark}")
    esc = result["escalation"]
    md += ["", "## Escalation", "", esc["summary"], ""]
    if esc["saturation"]:
        md += [f"Saturated at {esc['saturated_at']} clients:", ""]
        md += [f"- {reason}" for reason in esc["saturation"]]
        md.append("")
    if esc["reasons"]:
        md += [f"Gave at {esc['gave_at']} clients:", ""]
        md += [f"- {reason}" for reason in esc["reasons"] + esc["diagnosis"]]
    problems = result["server_log"]
    md += [
        "",
        "## Server log",
        "",
        f"{len(problems['tracebacks'])} traceback(s) while serving"
        + (": " + "; ".join(problems["tracebacks"][:10]) if problems["tracebacks"] else "")
        + f"; {len(problems['tracebacks_at_shutdown'])} at shutdown.",
    ]
    if result["mix"]["dropped"]:
        md += ["", "Mix entries the server refused at the probe (left out of the load):", ""]
        md += [f"- {d}" for d in result["mix"]["dropped"]]
    return "\n".join(md) + "\n"


def escalation_summary(escalation: dict[str, Any], phases: list[dict[str, Any]]) -> str:
    levels = [p["clients"] for p in phases if p["name"].startswith("escalation")]
    if not levels:
        return "No escalation level was run."
    text = ""
    if escalation["saturated_at"] is not None:
        text += f"Throughput stopped rising at {escalation['saturated_at']} clients. "
    if escalation["gave_at"] is not None:
        text += f"It gave at {escalation['gave_at']} clients."
    else:
        text += f"Nothing gave up to {max(levels)} clients."
    return text
