"""The load generator of ``bench/load/``: its statistics on hand-made records, and a few
seconds of real MCP sessions against a real ``python -m server`` over streamable HTTP on
the sample knowledge base, with one key exhausted so its RATE_LIMIT answers count as
intended and the other keys stay unlimited."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import anyio
import pytest

from bench.load.clients import exhaust_key, run_clients
from bench.load.knowledge_base import mix_from_database, probe_mix
from bench.load.records import INTENDED, OK, TIMEOUT, TOOLS, CallRecord
from bench.load.server_process import ServerProcess
from bench.load.stats import assess, summarize
from server.auth import KeyStore
from sql.database import Database


def _record(
    tool: str,
    ms: float,
    outcome: str = OK,
    *,
    at: float = 0.0,
    client: int = 0,
    cache_hit: bool | None = None,
    over_limit: bool = False,
) -> CallRecord:
    start = 100.0 + at
    return CallRecord(
        client, tool, "metadata", "", start, start + ms / 1000, ms, outcome, cache_hit, over_limit
    )


def test_summary_counts_latency_errors_and_intended_rate_limits() -> None:
    records = [
        _record("semantic_search", float(ms), at=i * 0.01) for i, ms in enumerate(range(1, 101))
    ]
    records += [
        _record("semantic_search", 50.0, "DB_CONNECTION", client=1),
        _record("find_vendor_info", 10_000.0, TIMEOUT, client=1),
        _record("get_chunk", 5.0, cache_hit=False),
        _record("get_chunk", 5.0, "RATE_LIMIT", client=2),  # a normal key limited: unintended
        _record("list_vendors", 2.0, INTENDED, client=9, over_limit=True),
        _record("list_vendors", 2.0, INTENDED, client=9, over_limit=True),
    ]
    s = summarize(records, duration_s=2.0)
    assert s["calls"] == 104 and s["clients"] == 3
    search = s["tools"]["semantic_search"]
    assert search["calls"] == 101 and search["errors"] == {"DB_CONNECTION": 1}
    assert search["p50"] == pytest.approx(50.0) and search["p99"] == pytest.approx(99.0)
    assert search["p99_p50"] == pytest.approx(99.0 / 50.0, abs=0.01)
    assert s["unintended_errors"] == {"DB_CONNECTION": 1, TIMEOUT: 1, "RATE_LIMIT": 1}
    assert s["timeouts"] == 1 and s["intended_errors"] == {INTENDED: 2}
    assert s["over_limit"] == {"calls": 2, "rate_limited": 2, "ok": 0, "other": 0}
    assert s["tools"]["get_chunk"]["cache_hit_share"] == 0.0
    assert s["throughput_per_s"] == pytest.approx(103 / 2.0)  # the timeout ended after 2 s
    assert s["modes"]["semantic_search metadata"]["calls"] == 101

    phase = {"summary": s, "server_alive": True}
    broke, _ = assess(phase, {"summary": s}, s["throughput_per_s"], timeout_s=10)
    assert any("timed out" in b for b in broke) and any("unintended errors" in b for b in broke)


@pytest.mark.slow
def test_load_generator_against_a_real_server(tmp_path: Path, sample_kb: Database) -> None:
    limit = 500  # calls per key: more than a client makes in 3 s, what the exhausted key spent
    keys_file = tmp_path / "keys.json"  # none: keys live in the database
    store = KeyStore(sample_kb)
    run = uuid.uuid4().hex[:8]
    probe, over = store.create(f"probe-{run}"), store.create(f"over-limit-{run}")
    keys = [store.create(f"client-{i}-{run}") for i in range(3)]
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"} | {
        "DATABASE_URL": sample_kb.conninfo,
        "KB_API_KEYS_FILE": str(keys_file),
        "LOG_LEVEL": "WARNING",
        "BMCIS_RATE_LIMIT_MINUTE": str(limit),
        "BMCIS_RATE_LIMIT_HOUR": str(limit),
        "BMCIS_RATE_LIMIT_DAY": str(limit),
    }
    server = ServerProcess(env, tmp_path / "server.log")
    try:
        mix, _ = anyio.run(probe_mix, server.url, probe, mix_from_database(sample_kb.conninfo))
        mix.cover_first = True  # every client calls every tool once first
        spent = anyio.run(lambda: exhaust_key(server.url, over, limit=limit))
        assert limit < spent <= limit + 8  # the in-flight calls of the other sessions
        records = anyio.run(
            lambda: run_clients(
                server.url,
                keys,
                3,
                3.0,
                mix,
                workers=2,
                timeout_s=30.0,
                over_limit_key=over,
                over_limit_rate=10.0,
            )
        )
    finally:
        server.stop()

    normal = [r for r in records if not r.over_limit]
    over_limit = [r for r in records if r.over_limit]
    assert {r.client for r in normal} == {0, 1, 2}
    assert {r.tool for r in normal} == set(TOOLS)  # each client starts with every tool once
    assert all(r.end >= r.start and r.latency_ms > 0 for r in records)
    assert all(r.ok for r in normal), [r for r in normal if not r.ok][:5]
    assert any(r.server_ms is not None for r in normal)
    assert over_limit and all(r.outcome == INTENDED for r in over_limit)

    s = summarize(records, 3.0)
    assert s["unintended_error_count"] == 0 and s["error_rate"] == 0
    assert s["intended_errors"] == {INTENDED: len(over_limit)}
    assert s["over_limit"]["rate_limited"] == len(over_limit)
    assert s["throughput_per_s"] > 0 and s["max_calls_per_client"] < limit
    assert s["cache_hit_share"] is not None
    for tool in TOOLS:
        t = s["tools"][tool]
        assert t["calls"] >= 3 and t["errors"] == {}
        assert t["p50"] <= t["p95"] <= t["p99"] <= t["max"]
    assert server.problems()["tracebacks"] == []
