"""``python -m extraction watch``: a real watcher process on real files in a temporary
corpus, a real PostgreSQL and the packaged models. Each case of live editing: saves,
moves and deletions, editors' temporary files, notes caught half-written, a burst of
200 changes, bad front matter, a vendor folder removed, a batch that cannot run, and
stopping or killing the watcher in the middle of a batch."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from extraction.rebuild.pipeline import Rebuilder
from sql.database import Database, open_database
from sql.settings import DatabaseSettings
from tests.fixtures import REPO
from tests.fixtures.cli import run_module
from tests.fixtures.corpus import GLOBEX, change_corpus, snapshot, write_corpus
from tests.fixtures.reliability import LIVE_TABLES, fingerprint

#: How long a test waits for the watcher to apply a change before it fails.
APPLY_TIMEOUT_S = 120.0


class Watch:
    """``python -m extraction watch CORPUS --json`` (or under
    :mod:`tests.fixtures.slow_publish`, its publish transaction held open ``pause``
    seconds) on the database ``conninfo``; its events as they are printed."""

    def __init__(
        self, corpus: Path, conninfo: str, *extra: str, pause: float | None = None, **env: str
    ) -> None:
        module = ["extraction"] if pause is None else ["tests.fixtures.slow_publish", str(pause)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", *module, "watch", str(corpus), "--json", *extra],
            cwd=REPO,
            env={**os.environ, "DATABASE_URL": conninfo, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[dict[str, Any]] = []
        self._new: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)  # every line on stdout is one JSON object
            self.events.append(event)
            self._new.put(event)
        self._new.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def next(self, *kinds: str, timeout: float = APPLY_TIMEOUT_S) -> dict[str, Any]:
        """The next event of one of ``kinds``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._new.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {kinds} event in {timeout} s: {self.log()}") from None
            if event is None:
                raise AssertionError(f"the watcher ended: {self.log()}")
            if event["event"] in kinds:
                return event

    def ready(self) -> dict[str, Any]:
        return self.next("watching", timeout=300)

    def builds(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == "build"]

    def log(self) -> str:
        time.sleep(0.2)
        return f"events {self.events[-5:]}, stderr {''.join(self.stderr)[-3000:]}"

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=60)
        self.close()
        assert "Traceback" not in "".join(self.stderr), self.log()
        return code

    def close(self) -> None:
        """Its output read to the end and its pipes closed (it has ended)."""
        for reader in self._readers:
            reader.join(timeout=10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "notes")


@pytest.fixture()
def built(db: Database, corpus: Path, embedder: Any, extractor: Any) -> Database:
    """``db`` brought up to date with ``corpus`` (in this process: quicker)."""
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    return db


@pytest.fixture()
def watch(built: Database, corpus: Path) -> Iterable[Watch]:
    """A watcher on ``corpus``, ready (its catch-up done, its models loaded)."""
    w = Watch(corpus, built.conninfo)
    try:
        w.ready()
        yield w
    finally:
        w.stop()


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = APPLY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def stored(db: Database) -> dict[str, str]:
    """source path -> content hash of every stored note."""
    with db.connect() as conn:
        rows = conn.execute("SELECT source_path, content_hash FROM documents").fetchall()
    return {r["source_path"]: r["content_hash"] for r in rows}


def vendors(db: Database) -> set[str]:
    with db.connect() as conn:
        return {r["name"] for r in conn.execute("SELECT name FROM vendors")}


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def touched(event: dict[str, Any], path: str) -> bool:
    """Whether a build event published or deleted the note ``path``."""
    return any(path in paths for paths in event["report"]["notes"].values())


def test_saves_moves_and_deletions_are_applied(watch: Watch, built: Database, corpus: Path) -> None:
    note = corpus / "vendors/Globex/overview.md"
    note.write_text(GLOBEX + "\nGlobex partners with Zentrovax Corporation.\n", encoding="utf-8")
    event = watch.next("build")
    assert event["report"]["notes"] == {"changed": ["vendors/Globex/overview.md"]}
    assert event["after_change_s"] < 30
    assert stored(built)["vendors/Globex/overview.md"] == sha256(note)
    with built.connect() as conn:
        hit = conn.execute("SELECT 1 FROM chunks WHERE content LIKE '%%Zentrovax%%'").fetchone()
        entity = conn.execute(
            "SELECT 1 FROM entities WHERE normalized_name LIKE 'zentrovax%%'"
        ).fetchone()
    assert hit is not None and entity is not None

    note.rename(note.with_name("about.md"))
    event = watch.next("build")
    assert event["report"]["notes"]["new"] == ["vendors/Globex/about.md"]
    assert event["report"]["notes"]["deleted"] == ["vendors/Globex/overview.md"]

    (corpus / "vendors/Acme/pricing.md").unlink()
    event = watch.next("build")
    assert event["report"]["notes"]["deleted"] == ["vendors/Acme/pricing.md"]
    assert "vendors/Acme/pricing.md" not in stored(built)


def test_editor_temporary_files_are_ignored_and_an_atomic_save_lands_on_its_note(
    watch: Watch, built: Database, corpus: Path
) -> None:
    folder = corpus / "vendors/Acme"
    before = snapshot(built)
    seen = len(watch.events)
    temporary = [".rocket.md.swp", ".rocket.md.swx", "rocket.md~", ".#rocket.md", "#rocket.md#"]
    temporary += ["4913", "rocket.md.tmp", "rocket.md___jb_tmp___", ".~lock.rocket.md#"]
    for name in temporary:
        (folder / name).write_text("---\ntitle: half\n", encoding="utf-8")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "note.md").write_text("# Hidden\n\nNot a note.\n", encoding="utf-8")
    time.sleep(1.5)
    for name in temporary:
        (folder / name).unlink()
    time.sleep(3.0)  # ten times the quiet period: a batch would have run by now
    assert watch.events[seen:] == [], "a temporary file started a batch"
    assert snapshot(built) == before

    # vim, gedit and most editors save by writing a temporary file and renaming it
    # over the note: one change of the note, nothing of the temporary file
    note = folder / "rocket.md"
    temp = folder / ".rocket.md.goutputstream-X1Y2"
    temp.write_text(note.read_text() + "\nAcme opened an office in Lisbon.\n", encoding="utf-8")
    os.replace(temp, note)
    event = watch.next("build")
    assert event["report"]["notes"] == {"changed": ["vendors/Acme/rocket.md"]}
    assert stored(built)["vendors/Acme/rocket.md"] == sha256(note)
    assert all(".hidden" not in p and "goutput" not in p for p in stored(built))


def test_a_note_caught_half_written_is_applied_once_and_whole(
    watch: Watch, built: Database, corpus: Path
) -> None:
    """Two notes: one written in 30 pieces over 3 s (each write sooner than the quiet
    period after the last), one whose front matter stays open for 1.5 s (longer than
    the quiet period, shorter than the hold for notes that look cut short)."""
    slow = corpus / "vendors/Initech/slow.md"
    paused = corpus / "vendors/Initech/paused.md"
    slow.parent.mkdir()
    body = "".join(f"Initech sentence {i} about TPS reports.\n" for i in range(30))
    text = "---\ntitle: Slow note\n---\n# Slow\n\n" + body
    head, tail = "---\ntitle: Paused note\n", "---\n# Paused\n\nInitech is based in Austin.\n"
    with slow.open("w", encoding="utf-8") as out, paused.open("w", encoding="utf-8") as other:
        other.write(head)
        other.flush()
        step = len(text) // 30 + 1
        for i in range(0, len(text), step):
            out.write(text[i : i + step])
            out.flush()
            if i // step == 15:
                other.write(tail)
                other.flush()
            time.sleep(0.1)
    wait_until(
        lambda: (
            stored(built).get("vendors/Initech/slow.md") == sha256(slow)
            and stored(built).get("vendors/Initech/paused.md") == sha256(paused)
        ),
        "both notes to be applied",
    )
    time.sleep(1.0)  # any later batch would be on its way
    for path in ("vendors/Initech/slow.md", "vendors/Initech/paused.md"):
        builds = [e for e in watch.builds() if touched(e, path)]
        assert len(builds) == 1, f"{path} applied {len(builds)} times: half-written first"
    with built.connect() as conn:
        row = conn.execute(
            "SELECT title FROM documents WHERE source_path = 'vendors/Initech/paused.md'"
        ).fetchone()
    assert row == {"title": "Paused note"}  # its front matter was read whole


@pytest.mark.slow
def test_a_burst_of_200_changes_is_at_most_two_builds(
    watch: Watch, built: Database, corpus: Path, tmp_path: Path
) -> None:
    """What a ``git checkout`` of another branch does: 200 notes written at once
    (staged beside the corpus, then moved in, as git does)."""
    staged = tmp_path / "branch"
    for i in range(200):
        vendor = f"Vendor{i % 20:02d}"
        path = staged / vendor / f"note-{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: Note {i}\n---\n# Note {i}\n\n{vendor} makes the Widget {i} "
            f"product in Springfield.\n",
            encoding="utf-8",
        )
    seen = len(watch.events)
    for path in sorted(staged.rglob("*.md")):
        target = corpus / "vendors" / path.relative_to(staged)
        target.parent.mkdir(exist_ok=True)
        os.replace(path, target)
    wait_until(
        lambda: sum(p.startswith("vendors/Vendor") for p in stored(built)) == 200,
        "the 200 notes to be applied",
        timeout=600,
    )
    time.sleep(1.0)
    builds = [e for e in watch.events[seen:] if e["event"] == "build"]
    assert 1 <= len(builds) <= 2, [e["report"]["documents"] for e in builds]
    assert sum(e["report"]["documents"]["new"] for e in builds) == 200


def test_bad_front_matter_is_a_problem_and_the_rest_of_the_batch_is_applied(
    watch: Watch, built: Database, corpus: Path
) -> None:
    folder = corpus / "vendors/Initech"
    folder.mkdir()
    (folder / "bad.md").write_text(
        "---\ntitle: [unclosed\nvendor: Initech\n---\n# Bad\n\nInitech makes staplers.\n",
        encoding="utf-8",
    )
    (folder / "good.md").write_text("# Good\n\nInitech is based in Austin.\n", encoding="utf-8")
    (corpus / "vendors/Globex/overview.md").write_text(GLOBEX + "\nMore.\n", encoding="utf-8")
    event = watch.next("build")
    notes = event["report"]["notes"]
    assert sorted(notes["new"]) == ["vendors/Initech/bad.md", "vendors/Initech/good.md"]
    assert notes["changed"] == ["vendors/Globex/overview.md"]
    problems = {(p["path"], p["kind"]) for p in event["report"]["problems"]}
    assert ("vendors/Initech/bad.md", "front_matter_error") in problems
    assert {"vendors/Initech/bad.md", "vendors/Initech/good.md"} <= set(stored(built))


def test_deleting_or_moving_away_a_vendor_folder_removes_the_vendor(
    watch: Watch, built: Database, corpus: Path, tmp_path: Path
) -> None:
    assert {"Acme", "Globex"} <= vendors(built)
    shutil.rmtree(corpus / "vendors/Globex")
    wait_until(lambda: "Globex" not in vendors(built), "Globex to be removed")
    # a folder moved out of the corpus is one event for the folder, none for its notes
    (corpus / "vendors/ACME_Inc.").rename(tmp_path / "elsewhere")
    wait_until(
        lambda: "vendors/ACME_Inc./support.md" not in stored(built),
        "the moved folder's note to be removed",
    )
    assert all(p.startswith("vendors/Acme/") for p in stored(built))


def test_a_batch_that_cannot_run_is_tried_again(
    watch: Watch, built: Database, corpus: Path
) -> None:
    """Another rebuild holding the database (its advisory lock): the change waits,
    is reported, and is applied once the other rebuild is done."""
    from extraction.rebuild.pipeline import _REBUILD_LOCK

    with psycopg.connect(built.conninfo, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (_REBUILD_LOCK,))
        (corpus / "vendors/Globex/overview.md").write_text(GLOBEX + "\nLater.\n", "utf-8")
        error = watch.next("error")
        assert "another rebuild is running" in error["message"] and error["retry_s"] >= 1
        other.execute("SELECT pg_advisory_unlock(%s)", (_REBUILD_LOCK,))
    event = watch.next("build")
    assert event["report"]["notes"] == {"changed": ["vendors/Globex/overview.md"]}


def test_polling_applies_a_save_too(built: Database, corpus: Path) -> None:
    """--poll (network drives): the folder scanned every KB_WATCH_POLL_MS instead."""
    w = Watch(corpus, built.conninfo, "--poll", KB_WATCH_POLL_MS="200")
    try:
        assert w.ready()["mode"] == "polling every 200 ms"
        note = corpus / "vendors/Globex/overview.md"
        note.write_text(GLOBEX + "\nGlobex opened an office in Lisbon.\n", encoding="utf-8")
        event = w.next("build")
        assert event["report"]["notes"] == {"changed": ["vendors/Globex/overview.md"]}
    finally:
        assert w.stop() == 0


def test_ctrl_c_between_batches_stops_at_once(built: Database, corpus: Path) -> None:
    w = Watch(corpus, built.conninfo)
    w.ready()
    started = time.monotonic()
    assert w.stop(signal.SIGINT) == 0
    assert time.monotonic() - started < 5
    assert w.events[-1] == {"event": "stopped", "during_batch": False}


def _in_publish(conninfo: str) -> bool:
    """Whether a connection to the database has held a transaction open, doing
    nothing, for over 3 s: the publish transaction that the slow publish keeps
    open (every earlier transaction of a batch this small is over in a second or two)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state = 'idle in transaction' AND now() - xact_start > interval '3 seconds'"
        ).fetchone()
    return bool(row and row[0])


def test_sigterm_during_a_batch_rolls_it_back(built: Database, corpus: Path) -> None:
    w = Watch(corpus, built.conninfo, pause=30)
    w.ready()
    before = snapshot(built)
    change_corpus(corpus)
    wait_until(lambda: _in_publish(built.conninfo), "the batch's publish transaction")
    code = w.stop(signal.SIGTERM)
    assert code == 143, w.log()
    assert w.events[-1] == {"event": "stopped", "during_batch": True}
    assert snapshot(built) == before
    with built.connect() as conn:
        last = conn.execute("SELECT status FROM graph_builds ORDER BY id DESC LIMIT 1").fetchone()
    assert last == {"status": "interrupted"}


#: Bookkeeping, not knowledge: the builds, their work units, the migrations applied.
BOOKKEEPING = (*LIVE_TABLES, "graph_builds", "work_units", "schema_migrations")
#: Tables whose rows point at chunks by id, also inside their JSON (compared by the
#: chunk's note and position instead).
BY_CHUNK = ("relationships", "entity_mentions")
CHUNK_KEY = (
    "(SELECT d.source_path || '#' || c.chunk_index FROM chunks c "
    "JOIN documents d ON d.id = c.document_id WHERE c.id = {})"
)


def knowledge_base(conninfo: str) -> dict[str, Any]:
    """Every knowledge-base table's rows, without timestamps and row ids (two
    databases with different histories number their rows differently): a
    fingerprint of each, and the relationships and mentions row by row, with the
    chunks they point at named by note and position."""
    rows = fingerprint(conninfo, skip=BOOKKEEPING + BY_CHUNK, timestamps=False, ids=False)
    chunk = CHUNK_KEY.format("r.evidence_chunk_id")
    listed = CHUNK_KEY.format("x.id::bigint")
    with psycopg.connect(conninfo) as conn:
        rels = conn.execute(
            "SELECT s.normalized_name, s.type, r.type, t.normalized_name, t.type, r.confidence, "
            f"r.evidence_sentence, {chunk}, r.metadata - 'chunks', "
            f"(SELECT array_agg(k ORDER BY k) FROM (SELECT {listed} AS k "
            "FROM jsonb_array_elements_text(coalesce(r.metadata->'chunks', '[]')) AS x(id)) ks) "
            "FROM relationships r JOIN entities s ON s.id = r.source_id "
            "JOIN entities t ON t.id = r.target_id"
        ).fetchall()
        mentions = conn.execute(
            "SELECT e.normalized_name, e.type, "
            f"{CHUNK_KEY.format('m.chunk_id')}, m.start_char, m.end_char, m.text "
            "FROM entity_mentions m JOIN entities e ON e.id = m.entity_id"
        ).fetchall()
    return {
        **rows,
        "relationships": sorted(map(repr, rels)),
        "mentions": sorted(map(repr, mentions)),
    }


@pytest.mark.slow
def test_sigkill_mid_batch_then_restart_converges_to_a_fresh_rebuild(
    built: Database, corpus: Path, fresh_database: str
) -> None:
    w = Watch(corpus, built.conninfo, pause=30)
    w.ready()
    before = snapshot(built)
    change_corpus(corpus)
    wait_until(lambda: _in_publish(built.conninfo), "the batch's publish transaction")
    w.proc.send_signal(signal.SIGKILL)
    w.proc.wait(timeout=30)
    w.close()
    assert snapshot(built) == before  # the previous knowledge base, whole

    # more changes while no watcher runs: the next start finds them by comparing
    (corpus / "vendors/Globex/overview.md").write_text(GLOBEX + "\nUmbrella.\n", "utf-8")
    again = Watch(corpus, built.conninfo)
    try:
        catch_up = again.next("build", timeout=300)
        assert catch_up["changed_paths"] == 0  # the start's comparison, not an event
        again.ready()
    finally:
        assert again.stop() == 0
    reference = run_module(
        "extraction", "rebuild-graph", str(corpus), "--quiet", env={"DATABASE_URL": fresh_database}
    )
    assert reference.returncode == 0, reference.stderr
    assert knowledge_base(built.conninfo) == knowledge_base(fresh_database)
    assert snapshot(built) == snapshot(open_database(DatabaseSettings(database_url=fresh_database)))
    with built.connect() as conn:
        statuses = [r["status"] for r in conn.execute("SELECT status FROM graph_builds")]
    assert "interrupted" in statuses and statuses[-1] == "complete"


def test_watch_refuses_a_file_and_a_missing_folder(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Note\n")
    proc = run_module("extraction", "watch", str(note))
    assert proc.returncode == 2 and "watch follows a folder" in proc.stderr
    proc = run_module("extraction", "watch", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
    proc = run_module("extraction", "watch", "--help")
    assert proc.returncode == 0 and "--poll" in proc.stdout and "KB_WATCH_QUIET_S" in proc.stdout
