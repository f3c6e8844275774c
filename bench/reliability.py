"""The reliability report: ``python -m bench.reliability`` (``make reliability``).

One command reruns everything the report states and rewrites
``docs/reliability.md`` from what it saw:

1. the fault, fuzzing and security tests (real PostgreSQL, real models, real MCP
   sessions; see each test module) with ``KB_RELIABILITY_DIR`` set, so each test
   writes the figures it measured (:func:`tests.fixtures.reliability.record`), plus a
   JUnit file for pass / fail / time per test;
2. the load benchmark (``python -m bench.load``), whose results are
   ``bench/results/load.json``.

The report is rendered only from those files: a figure in it is a figure some
run produced. Nothing is rendered for a test that did not pass, and the verdict
table says so. Raw records: ``bench/results/reliability.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import REPO, RESULTS

REPORT = REPO / "docs" / "reliability.md"

# What the report reruns: every test that records a figure, and its neighbours.
TESTS = [
    "tests/reliability/test_faults.py",
    "tests/reliability/test_atomic.py",
    "tests/server/test_fuzz.py",
    "tests/extraction/test_fuzz.py",
    "tests/server/test_transports.py",
    "tests/server/test_pure.py",
    "tests/server/test_auth.py",
    "tests/server/test_replicas.py",
    "tests/bench/test_load_bench.py",
]


def run_tests(records: Path, junit: Path) -> int:
    env = {**os.environ, "KB_RELIABILITY_DIR": str(records)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--junitxml={junit}",
        *[t for t in TESTS if (REPO / t).exists()],
    ]
    print("$", " ".join(command[2:]), flush=True)
    return subprocess.run(command, cwd=REPO, env=env, check=False).returncode


def run_load(args: list[str]) -> int:
    command = [sys.executable, "-m", "bench.load", *args]
    print("$", " ".join(command[1:]), flush=True)
    return subprocess.run(command, cwd=REPO, check=False).returncode


def read_junit(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        message = ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                text = (node.get("message") or "").strip()
                message = text.splitlines()[0][:200] if text else ""
        out.append(
            {
                "test": f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}",
                "outcome": outcome,
                "seconds": round(float(case.get("time") or 0.0), 2),
                "message": message,
            }
        )
    return out


def read_records(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.is_file()}


# -- rendering ------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _figures(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return ["_no figures: the test did not run to the end (see the test table)_"]
    return [f"- {k.replace('_', ' ')}: {_fmt(v)}" for k, v in record.items() if k != "test"]


SECTIONS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "Faults",
        "Each fault is an automated test against real processes.",
        [
            (
                "fault_database_outage",
                "PostgreSQL stopped for 5 s under load, then restarted",
                "pytest tests/reliability/test_faults.py -k stopped_under_load",
            ),
            (
                "fault_rebuild_while_querying",
                "`rebuild-graph` lands while MCP clients query",
                "pytest tests/reliability/test_faults.py -k rebuild_while_clients",
            ),
            (
                "fault_sigkill_rebuild",
                "`rebuild-graph` killed with SIGKILL at random points",
                "pytest tests/reliability/test_atomic.py -k sigkill",
            ),
            (
                "fault_server_killed",
                "the server process killed and restarted",
                "pytest tests/reliability/test_faults.py -k server_killed",
            ),
            (
                "fault_disk_full",
                "the embedded database's disk full during a rebuild",
                "pytest tests/reliability/test_faults.py -k disk_full",
            ),
            (
                "fault_read_only_pgdata",
                "the embedded database's data directory read-only",
                "pytest tests/reliability/test_faults.py -k read_only",
            ),
        ],
    ),
    (
        "Hostile input",
        "Property-based fuzzing (hypothesis) through a real MCP client session, and the "
        "extraction CLI on hostile files.",
        [
            (
                "fuzz_mcp_tools",
                "every tool's arguments, fuzzed",
                "pytest tests/server/test_fuzz.py",
            ),
            (
                "fuzz_extraction_cli",
                "the extraction CLI on hostile files",
                "pytest tests/extraction/test_fuzz.py",
            ),
        ],
    ),
    (
        "Security",
        "Keys (shared by every replica through the database), logs, binding, request size "
        "and rate limits.",
        [
            (
                "security_rate_limit_http",
                "rate limits exact under concurrency, per key (over HTTP)",
                "pytest tests/server/test_transports.py -k exact_over_http",
            ),
            (
                "replicas_shared_state",
                "three replicas: a revoked key refused by all at once, a new key accepted "
                "without a restart, cursors continued on another replica, every replica on a "
                "new build",
                "pytest tests/server/test_replicas.py -k cursors_keys_and_rebuilds",
            ),
            (
                "replicas_rate_limit",
                "three replicas share each key's rate limits exactly",
                "pytest tests/server/test_replicas.py -k rate_limits",
            ),
            (
                "security_keys_not_logged",
                "no key in the DEBUG log",
                "pytest tests/server/test_transports.py -k never_reach_the_logs",
            ),
            (
                "security_loopback_bind",
                "HTTP binds to 127.0.0.1 unless told otherwise",
                "pytest tests/server/test_transports.py -k loopback",
            ),
            (
                "security_body_limit",
                "request bodies over KB_HTTP_MAX_BODY_BYTES refused",
                "pytest tests/server/test_transports.py -k oversized",
            ),
        ],
    ),
]


def render(
    records: dict[str, dict[str, Any]],
    tests: list[dict[str, Any]],
    load: dict[str, Any] | None,
    load_md: str | None,
    meta: dict[str, Any],
) -> str:
    failed = [t for t in tests if t["outcome"] in ("failed", "error")]
    skipped = [t for t in tests if t["outcome"] == "skipped"]
    lines = [
        "# Reliability report",
        "",
        f"Generated by `python -m bench.reliability` (`make reliability`) on {meta['when']} "
        f"at commit `{meta['commit']}`, {meta['machine']}. Every figure below comes from "
        "that run; each section names the command that reproduces it.",
        "",
        "## Verdict",
        "",
        f"- Tests run: {len(tests)}; passed {sum(t['outcome'] == 'passed' for t in tests)}, "
        f"failed {len(failed)}, skipped {len(skipped)}.",
    ]
    lost = [
        name
        for name, r in records.items()
        if any(
            k in r and r[k] is False
            for k in (
                "database_unchanged",
                "previous_graph_intact",
                "previous_graph_intact_after_every_kill",
                "data_intact",
                "keys_file_unchanged",
                "next_run_equals_uninterrupted_run",
            )
        )
    ]
    lines.append(
        "- What was lost: "
        + ("nothing" if not lost and not failed else f"see {', '.join(lost) or 'failed tests'}")
        + "."
    )
    for t in failed:
        lines.append(f"- FAILED `{t['test']}`: {t['message']}")
    for t in skipped:
        lines.append(f"- skipped `{t['test']}`: {t['message']}")
    lines += ["", "## Load", ""]
    if load_md:
        lines += ["Command: `python -m bench.load` (`make bench-load`).", "", load_md.strip(), ""]
    else:
        lines += ["_The load benchmark did not run (`--skip-load`, or it failed)._", ""]
    for title, intro, items in SECTIONS:
        lines += [f"## {title}", "", intro, ""]
        for key, what, command in items:
            lines += [f"### {what}", "", f"Command: `{command}`", "", *_figures(records.get(key))]
            lines.append("")
    lines += [
        "## Every test of the run",
        "",
        "| test | outcome | seconds |",
        "|---|---|---|",
        *[f"| `{t['test']}` | {t['outcome']} | {t['seconds']} |" for t in tests],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.reliability",
        description=(
            "Rerun the fault, fuzzing and security tests and the load benchmark, then "
            "rewrite docs/reliability.md from what they measured."
        ),
    )
    parser.add_argument("--skip-load", action="store_true", help="do not rerun the load benchmark")
    parser.add_argument(
        "--load-args",
        default="",
        help="arguments for `python -m bench.load` (e.g. '--quick'); default: its defaults",
    )
    parser.add_argument("--out", type=Path, default=REPORT, help=f"report path [{REPORT}]")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kb-reliability-") as tmp:
        records_dir = Path(tmp) / "records"
        junit = Path(tmp) / "junit.xml"
        tests_rc = run_tests(records_dir, junit)
        load_rc = None if args.skip_load else run_load(args.load_args.split())
        records = read_records(records_dir)
        tests = read_junit(junit)
    load_json = RESULTS / "load.json"
    load_md_path = RESULTS / "load.md"
    load = json.loads(load_json.read_text()) if load_rc == 0 and load_json.exists() else None
    load_md = load_md_path.read_text() if load is not None and load_md_path.exists() else None
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    meta = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or "unknown",
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, Python "
        f"{platform.python_version()}",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(records, tests, load, load_md, meta))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "reliability.json").write_text(
        json.dumps({"meta": meta, "records": records, "tests": tests}, indent=2) + "\n"
    )
    failed = sum(t["outcome"] in ("failed", "error") for t in tests)
    print(
        f"wrote {args.out} ({len(tests)} tests, {failed} failed, {len(records)} records; "
        f"{time.monotonic() - started:.0f} s)"
    )
    return 0 if tests_rc == 0 and load_rc in (None, 0) else 1


if __name__ == "__main__":
    sys.exit(main())
