"""Rebuild work split into units claimed by worker processes (extraction.rebuild.work,
extraction.rebuild.workers): real processes, a real PostgreSQL, the packaged models."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from extraction.models import ExtractionContext
from extraction.rebuild.pipeline import Rebuilder, auto_workers
from extraction.rebuild.work import UnitRunner, claim, embed_item, enqueue, extract_item
from extraction.rebuild.workers import Worker, WorkerError
from sql import queries
from sql.database import Database
from tests.fixtures import REPO
from tests.fixtures.cli import run_module
from tests.fixtures.reliability import LIVE_TABLES, fingerprint

#: Tables whose rows are the run's bookkeeping, not the knowledge base.
BOOKKEEPING = (*LIVE_TABLES, "graph_builds", "work_units", "schema_migrations")


def knowledge_base(conninfo: str) -> dict[str, tuple[int, str]]:
    """Every knowledge-base table's rows, timestamps left out."""
    return fingerprint(conninfo, skip=BOOKKEEPING, timestamps=False)


def _env(conninfo: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": conninfo, "KB_STORE_BATCH": "4", **extra}


def _extraction(*args: str, env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "extraction", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _held_by(conninfo: str, worker: str) -> bool:
    """True while ``worker`` holds a live claim on an unfinished unit."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM work_units WHERE claimed_by = %s AND done_at IS NULL "
            "AND lease_until > now()",
            (worker,),
        ).fetchone()
    return bool(row and row[0])


def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _kill_while_holding(proc: subprocess.Popen[str], conninfo: str, name: str) -> None:
    """SIGKILL ``proc`` while it holds a claimed unit: it is stopped (SIGSTOP)
    first, so that what the database says it holds cannot change before the kill."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _wait_for(lambda: _held_by(conninfo, name), 60, "the worker to claim a unit")
        proc.send_signal(signal.SIGSTOP)
        if _held_by(conninfo, name):
            proc.send_signal(signal.SIGKILL)
            return
        proc.send_signal(signal.SIGCONT)
    raise AssertionError("the worker never held a unit long enough to be killed")


def test_two_workers_and_one_killed_mid_unit_publish_what_one_process_does(
    db: Database, fresh_database: str, sample_copy: Path
) -> None:
    # the reference: one process, no workers, on a database of its own
    single = _run("rebuild-graph", str(sample_copy), "--quiet", env=_env(fresh_database))
    assert single.returncode == 0, single.stderr

    # a worker "on another machine" (lease 3 s) is killed outright mid-unit while
    # two local workers of the rebuild go on
    env = _env(db.conninfo, KB_WORKER_LEASE_S="3")
    outsider = _extraction("worker", env=env)
    try:
        assert outsider.stderr is not None
        assert "waiting for units" in outsider.stderr.readline()  # models loaded
        name = f"{socket.gethostname()}:{outsider.pid}"
        build = _extraction("rebuild-graph", str(sample_copy), "--workers", "2", "--json", env=env)
        _kill_while_holding(outsider, db.conninfo, name)
        out, err = build.communicate(timeout=300)
    finally:
        outsider.kill()
        outsider.communicate()
    assert build.returncode == 0, err
    report = json.loads(out)
    assert report["work"]["claimed_again"] >= 1  # the killed worker's unit was done by another
    assert report["work"]["workers"] == 2  # the killed one finished none
    assert knowledge_base(db.conninfo) == knowledge_base(fresh_database)
    with psycopg.connect(db.conninfo) as conn:
        assert conn.execute("SELECT count(*) FROM work_units").fetchone() == (0,)


def test_rebuild_fails_clearly_when_its_only_worker_dies_and_keeps_the_previous_kb(
    db: Database, sample_copy: Path
) -> None:
    env = _env(db.conninfo)
    first = _run("rebuild-graph", str(sample_copy / "vendors/Apple"), env=env)
    assert first.returncode == 0, first.stderr
    before = knowledge_base(db.conninfo)

    build = _extraction("rebuild-graph", str(sample_copy), "--workers", "1", "--quiet", env=env)

    def claimant() -> str | None:
        with psycopg.connect(db.conninfo, autocommit=True) as conn:
            row = conn.execute(
                "SELECT claimed_by FROM work_units WHERE done_at IS NULL AND lease_until > now()"
            ).fetchone()
        return row[0] if row else None

    _wait_for(lambda: claimant() is not None, 60, "the worker to claim a unit")
    pid = int(str(claimant()).rsplit(":", 1)[1])
    os.kill(pid, signal.SIGKILL)
    _, err = build.communicate(timeout=120)
    assert build.returncode == 1
    assert "every worker process ended before the work was done" in err
    assert "exit -9" in err
    assert "Traceback" not in err
    assert knowledge_base(db.conninfo) == before
    with psycopg.connect(db.conninfo) as conn:
        assert conn.execute("SELECT count(*) FROM work_units").fetchone() == (0,)
        status = conn.execute("SELECT status FROM graph_builds ORDER BY id DESC LIMIT 1")
        assert status.fetchone() == ("failed",)


# -- the queue's guarantees, in one process ------------------------------------


def _start_build(conn: psycopg.Connection[Any], models: dict[str, str]) -> int:
    row = conn.execute(
        queries()["start_build"], {"corpus_root": "test", "models": Jsonb(models)}
    ).fetchone()
    conn.commit()
    assert row is not None
    return int(row["id"])


def _models(db: Database) -> tuple[Rebuilder, dict[str, str]]:
    rebuilder = Rebuilder(db)
    return rebuilder, rebuilder.models_used()


def test_a_claim_that_lost_its_lease_writes_nothing_and_the_new_claim_finishes(
    db: Database, embedder: Any, extractor: Any
) -> None:
    rebuilder, models = _models(db)
    runner = UnitRunner(rebuilder.model.name, lambda: embedder, lambda: extractor)
    with db.connect() as conn:
        build = _start_build(conn, models)
        enqueue(conn, build, "embed", [embed_item("h1", "Apple makes the iPhone.")], 4)
        conn.commit()
        slow = claim(conn, "slow", models, lease_s=1.0, build_id=build)
        assert slow is not None
        assert claim(conn, "other", models, lease_s=1.0, build_id=build) is None  # held
        rows = runner.compute(slow)
        time.sleep(1.2)  # the slow worker's lease runs out
        fast = claim(conn, "fast", models, lease_s=60.0, build_id=build)
        assert fast is not None and fast.id == slow.id and fast.attempts == 2
        assert runner.finish(conn, slow, "slow", rows) is False
        assert conn.execute("SELECT count(*) AS n FROM embedding_cache").fetchone() == {"n": 0}
        assert runner.finish(conn, fast, "fast", runner.compute(fast)) is True
        assert runner.finish(conn, slow, "slow", rows) is False  # done: never twice
        assert conn.execute("SELECT count(*) AS n FROM embedding_cache").fetchone() == {"n": 1}


def test_a_worker_of_another_extractor_version_claims_nothing_and_says_why(
    db: Database, embedder: Any, extractor: Any
) -> None:
    rebuilder, models = _models(db)
    newer = {**models, "extractor_version": "999"}
    runner = UnitRunner(rebuilder.model.name, lambda: embedder, lambda: extractor)
    with db.connect() as conn:
        build = _start_build(conn, newer)
        enqueue(conn, build, "embed", [embed_item("h1", "text")], 4)
        conn.commit()
    worker = Worker(db, runner, models, lease_s=60.0)
    with pytest.raises(WorkerError, match=r"build \d+ needs extractor_version '999'"):
        worker.run(build)
    lines: list[str] = []
    idle = Worker(db, runner, models, lease_s=60.0, log=lines.append)
    report = idle.run(until_idle=True)
    assert report.units == {"embed": 0, "extract": 0}
    assert any("extractor_version '999' (this worker: " in line for line in lines)
    with db.connect() as conn:
        row = conn.execute("SELECT attempts FROM work_units").fetchone()
        assert row == {"attempts": 0}


def test_a_worker_whose_connection_is_dropped_reconnects_and_loses_nothing(
    db: Database, embedder: Any, extractor: Any
) -> None:
    rebuilder, models = _models(db)
    runner = UnitRunner(rebuilder.model.name, lambda: embedder, lambda: extractor)
    items = [embed_item(f"h{i}", f"note number {i} about Apple products") for i in range(40)]
    with db.connect() as conn:
        build = _start_build(conn, models)
        enqueue(conn, build, "embed", items, 2)
        conn.commit()
    worker = Worker(db, runner, models, lease_s=60.0, poll_s=0.1, name="dropped")
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(worker.run(build)))
    thread.start()
    killed = 0
    with psycopg.connect(db.conninfo, autocommit=True) as admin:
        while thread.is_alive() and killed < 5:
            row = admin.execute(
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend') AS t"
            ).fetchone()
            killed += int(row[0]) if row else 0
            time.sleep(0.05)
    thread.join(timeout=120)
    assert result, "the worker did not finish"
    report = result[0]
    assert killed >= 1 and report.reconnects >= 1
    with db.connect() as conn:
        done = conn.execute(
            "SELECT count(*) FILTER (WHERE done_at IS NOT NULL) AS done, count(*) AS n "
            "FROM work_units WHERE build_id = %(b)s",
            {"b": build},
        ).fetchone()
        cached = conn.execute("SELECT count(*) AS n FROM embedding_cache").fetchone()
    assert done == {"done": 20, "n": 20}
    assert cached == {"n": 40}
    assert report.units["embed"] + report.dropped >= 20


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m extraction ARGS`` to the end."""
    return run_module("extraction", *args, env=env)


def test_auto_workers_start_one_per_core_only_for_a_large_build() -> None:
    cores = len(os.sched_getaffinity(0))
    assert auto_workers(0, 512) == auto_workers(511, 512) == 0
    assert auto_workers(512, 512) == (cores if cores >= 2 else 0)


def test_auto_rebuild_uses_local_workers_above_the_threshold_and_this_process_below(
    db: Database, fresh_database: str, sample_copy: Path
) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("auto starts workers on two or more cores only")
    small = _run("rebuild-graph", str(sample_copy), "--json", env=_env(db.conninfo))
    assert small.returncode == 0, small.stderr
    below = json.loads(small.stdout)  # the sample is below the default threshold
    assert below["chunks_embedded"] < 512 and below["work"]["workers"] == 1
    env = _env(fresh_database, KB_AUTO_WORKERS_MIN_CHUNKS="1")
    large = _run("rebuild-graph", str(sample_copy), "--json", env=env)
    assert large.returncode == 0, large.stderr
    above = json.loads(large.stdout)  # one worker process per core
    assert above["work"]["workers"] == 2 and above["totals"] == below["totals"]
    assert knowledge_base(fresh_database) == knowledge_base(db.conninfo)


def test_worker_cli_rejects_bad_arguments(db: Database) -> None:
    env = _env(db.conninfo)
    for workers in ("-1", "x", "Auto"):
        proc = _run("rebuild-graph", "--workers", workers, env=env)
        assert proc.returncode == 2 and "--workers" in proc.stderr, proc.stderr
    proc = _run("worker", "--build", "0", env=env)
    assert proc.returncode == 2 and "not a build id" in proc.stderr
    proc = _run("worker", "--build", "424242", env=env)
    assert proc.returncode == 1 and "build 424242 does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _run("worker", env={**env, "KB_WORKER_LEASE_S": "0"})
    assert proc.returncode == 2 and "KB_WORKER_LEASE_S" in proc.stderr


def test_sigterm_gives_the_unit_in_hand_back_at_once(db: Database) -> None:
    _, models = _models(db)
    with db.connect() as conn:
        build = _start_build(conn, models)
        items = [
            extract_item(f"k{i}", "Apple makes the iPhone. " * 200, ExtractionContext())
            for i in range(64)
        ]
        enqueue(conn, build, "extract", items, 32)
        conn.commit()
    worker = _extraction("worker", "--build", str(build), env=_env(db.conninfo))
    name = f"{socket.gethostname()}:{worker.pid}"
    try:
        _wait_for(lambda: _held_by(db.conninfo, name), 60, "the worker to claim a unit")
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    assert worker.returncode == 143, err
    assert "a unit in hand was given back" in err
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT claimed_by, lease_until, done_at FROM work_units ORDER BY id"
        ).fetchall()
    # the unit it held is free to claim now, not after its lease
    assert rows[0]["claimed_by"] == name and rows[0]["lease_until"] is None
    assert all(r["done_at"] is None for r in rows)
