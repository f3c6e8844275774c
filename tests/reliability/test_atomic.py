"""Readers never see a half-written knowledge base; a killed rebuild loses nothing."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from extraction.rebuild.pipeline import Rebuilder
from sql.database import Database, open_database
from sql.settings import DatabaseSettings
from tests.fixtures import REPO
from tests.fixtures.corpus import change_corpus, snapshot, write_corpus
from tests.fixtures.reliability import record


def reader_view(conninfo: str) -> tuple[Any, ...]:
    """What one reader transaction sees: documents, chunks and graph together."""
    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction():
            docs = conn.execute(
                "SELECT source_path, content_hash FROM documents ORDER BY 1"
            ).fetchall()
            chunks = conn.execute("SELECT count(*) AS n FROM chunks").fetchone()
            ents = conn.execute(
                "SELECT normalized_name, type FROM entities ORDER BY 1, 2"
            ).fetchall()
            rels = conn.execute("SELECT count(*) AS n FROM relationships").fetchone()
    return (
        tuple((d["source_path"], d["content_hash"]) for d in docs),
        chunks["n"] if chunks else 0,
        tuple((e["normalized_name"], e["type"]) for e in ents),
        rels["n"] if rels else 0,
    )


def test_concurrent_readers_see_old_or_new_never_a_mix(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "notes")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    before = reader_view(db.conninfo)
    change_corpus(corpus)
    slow = Rebuilder(db, embedder=embedder, extractor=extractor)
    slow.publisher.while_open = lambda: time.sleep(1.5)
    errors: list[BaseException] = []

    def rebuild() -> None:
        try:
            slow.run(corpus)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    worker = threading.Thread(target=rebuild)
    worker.start()
    seen = []
    while worker.is_alive():
        seen.append(reader_view(db.conninfo))
        time.sleep(0.05)
    worker.join()
    assert not errors, errors
    after = reader_view(db.conninfo)
    assert after != before
    assert len(seen) >= 10, "the reader did not overlap the publish window"
    mixed = [v for v in seen if v not in (before, after)]
    assert mixed == [], "a reader saw a half-published knowledge base"
    assert before in seen  # it did read while the publish transaction was open


def _spawn_rebuild(corpus: Path, conninfo: str, pause: float) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": conninfo,
        "KB_STORE_BATCH": "4",
    }
    command = ["rebuild-graph", str(corpus), "--quiet", "--json"]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fixtures.slow_publish", str(pause), *command],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


KILL_POINTS = 20


def _stage_at(seconds: float, stages: dict[str, float], total: float) -> str:
    """Which stage an uninterrupted run was in ``seconds`` after it started."""
    t = total - sum(stages.values())  # interpreter, imports, connecting: before "scan"
    if seconds < t:
        return "start-up"
    for stage, took in stages.items():  # in the order they ran
        if stage == "publish":
            break  # the kill runs pause inside the publish transaction
        t += took
        if seconds < t:
            return stage
    return "publish"


@pytest.mark.slow
def test_sigkill_at_random_points_keeps_previous_graph_and_next_run_completes(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path, fresh_database: str
) -> None:
    corpus = write_corpus(tmp_path / "notes")
    original = tmp_path / "original"
    shutil.copytree(corpus, original)
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    previous = snapshot(db)
    change_corpus(corpus)
    # The uninterrupted run, as a process like the killed ones, on a copy of the
    # same starting point: its time span is where the kill points are drawn,
    # and its result is what the run after the kills must reach.
    reference = open_database(DatabaseSettings(database_url=fresh_database))
    Rebuilder(reference, embedder=embedder, extractor=extractor).run(original)
    started = time.monotonic()
    full = _spawn_rebuild(corpus, reference.conninfo, pause=0.0)
    out, err = full.communicate(timeout=300)
    span = time.monotonic() - started
    assert full.returncode == 0, err.decode()[-2000:]
    stages = json.loads(out)["stage_seconds"]
    # Kill runs pause 30 s inside the publish transaction, so none can finish
    # before its kill; points after the pre-publish work land inside it.
    rng = random.Random(20261122)
    delays = sorted(rng.uniform(0.05, span + 1.0) for _ in range(KILL_POINTS))
    landed: dict[str, int] = {}
    for delay in delays:
        proc = _spawn_rebuild(corpus, db.conninfo, pause=30.0)
        time.sleep(delay)
        assert proc.poll() is None, f"the rebuild ended before its kill at {delay:.2f} s"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)  # reaps it and closes its pipes
        assert snapshot(db) == previous, f"graph changed after a kill at {delay:.2f} s"
        stage = _stage_at(delay, stages, span)
        landed[stage] = landed.get(stage, 0) + 1
    done = _spawn_rebuild(corpus, db.conninfo, pause=0.0)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err.decode()[-2000:]
    assert snapshot(db) == snapshot(reference)
    with db.connect() as conn:
        statuses = [
            r["status"] for r in conn.execute("SELECT status FROM graph_builds ORDER BY id")
        ]
    assert statuses[0] == "complete" and statuses[-1] == "complete"
    assert "interrupted" in statuses
    record(
        "fault_sigkill_rebuild",
        kill_points=len(delays),
        uninterrupted_run_s=round(span, 2),
        kill_times_s=[round(d, 2) for d in delays],
        stage_at_kill=landed,
        previous_graph_intact_after_every_kill=True,
        next_run_equals_uninterrupted_run=True,
        interrupted_builds_recorded=statuses.count("interrupted"),
    )
