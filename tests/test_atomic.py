"""Readers never see a half-written knowledge base; a killed rebuild loses nothing."""

from __future__ import annotations

import os
import random
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

from extraction.pipeline import Rebuilder
from extraction.settings import ExtractionSettings
from sql.database import Database, open_database
from sql.settings import DatabaseSettings
from tests.test_pipeline import GLOBEX, snapshot, write_corpus

REPO = Path(__file__).resolve().parent.parent


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


def change_corpus(corpus: Path) -> None:
    (corpus / "vendors/Globex/overview.md").write_text(
        GLOBEX + "\nGlobex partners with Umbrella Corporation in Raccoon City.\n", encoding="utf-8"
    )
    (corpus / "vendors/Acme/pricing.md").unlink()
    new = corpus / "vendors/Initech/tps.md"
    new.parent.mkdir(parents=True)
    new.write_text(
        "# TPS\n\nInitech is headquartered in Austin, Texas. Bill Lumbergh works for Initech.\n"
    )


def test_concurrent_readers_see_old_or_new_never_a_mix(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "notes")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    before = reader_view(db.conninfo)
    change_corpus(corpus)
    slow = Rebuilder(
        db,
        settings=ExtractionSettings(publish_pause_s=1.5),
        embedder=embedder,
        extractor=extractor,
    )
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
        "KB_FAULT_PUBLISH_PAUSE_S": str(pause),
        "KB_STORE_BATCH": "4",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "extraction", "rebuild-graph", str(corpus), "--quiet", "--json"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_sigkill_at_any_point_keeps_previous_graph_and_next_run_completes(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path, fresh_database: str
) -> None:
    corpus = write_corpus(tmp_path / "notes")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    previous = snapshot(db)
    change_corpus(corpus)
    rng = random.Random(20261122)
    # Kill points: while models load / caches fill (random), and inside the
    # publish transaction (the pause makes that window wide enough to hit).
    delays = [rng.uniform(0.5, 12.0) for _ in range(3)]
    for delay in [*delays, None]:
        proc = _spawn_rebuild(corpus, db.conninfo, pause=30.0)
        if delay is None:
            # wait until the publish transaction has written chunks, then kill
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                with psycopg.connect(db.conninfo, row_factory=dict_row) as conn:
                    active = conn.execute(
                        "SELECT count(*) AS n FROM pg_stat_activity "
                        "WHERE state = 'idle in transaction' AND datname = current_database() "
                        "AND query LIKE 'COPY chunks%%'"
                    ).fetchone()
                if active and active["n"]:
                    break
                time.sleep(0.2)
        else:
            time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)  # reaps it and closes its pipes
        assert snapshot(db) == previous, f"graph changed after a kill at {delay}"
    done = _spawn_rebuild(corpus, db.conninfo, pause=0.0)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err.decode()[-2000:]
    # the same corpus rebuilt without interruption in a new database
    reference = open_database(DatabaseSettings(database_url=fresh_database))
    Rebuilder(reference, embedder=embedder, extractor=extractor).run(corpus)
    assert snapshot(db) == snapshot(reference)
    with db.connect() as conn:
        statuses = [
            r["status"] for r in conn.execute("SELECT status FROM graph_builds ORDER BY id")
        ]
    assert statuses[0] == "complete" and statuses[-1] == "complete"
    assert "interrupted" in statuses
