"""Watcher benchmark: ``python -m bench.watch [--corpus DIR] [--edits N] [--switches N]``.

On a copy of the shared vendor corpus, in a database of its own (``kb_bench_watch`` on
the configured server, brought up to date with the copy by ``rebuild-graph`` first:
incremental after the first run), with a real ``python -m extraction watch`` process:

1. **Save to answer**, N one-note edits (20): each appends two sentences naming a new
   organisation (``<Vendor> announced a partnership with <Name> Corporation. <Name>
   Corporation will offer support for it.``: the vendor graph keeps a name the model
   found once only with more support, such as a second mention) to a note drawn by
   ``random.Random(41)`` among the notes of vendors whose whole graph fits
   find_vendor_info's full answer (at most 60 entities), one after the other.
   Timed from the save (the file closed) until ``semantic_search`` returns the
   sentence *and* ``find_vendor_info`` (full) lists the new entity, both asked every
   0.1 s in this process through the server's own frame (``Service.call``: admission,
   snapshot, caches, tool, envelope; no transport). Targets: p50 <= 3 s, p95 <= 6 s.
2. **Idle cost**: the watcher's CPU time (user + system, psutil) over ``--idle-s``
   seconds (30) with nothing changing, as a share of one core; target <= 1 %. The same
   for a watcher polling the folder (``--poll``, every KB_WATCH_POLL_MS), without a
   target.
3. **Branch switch**: 200 notes drawn by ``random.Random(42)``, each given a paragraph
   of its own (new text every round), written beside the corpus and renamed into it
   as ``git checkout`` does. In each of M rounds (``--switches``, 3) the watcher
   applies one switch and ``rebuild-graph`` (the watcher stopped) the other: to the
   changed notes and back, the watcher first in even rounds and second in odd ones,
   so both do the same work in turn. The watcher is timed from the first rename until
   the database holds all 200 new versions, ``rebuild-graph`` from its start to its
   exit. Target: median watcher <= 1.2 x median rebuild-graph, and at most 2 builds
   per switch.

Results: ``bench/results/watch.json`` and ``watch.md``. Figures from one machine and
one run; the machine is shared, so only what one run compares side by side (the
ratio) means much.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import bench_parser, bench_queries, machine, write_report
from bench.rebuild import rebuild
from evals.corpus import checked_corpus, default_corpus
from search.metrics import percentile
from sql.database import Database, named_database, server_conninfo
from sql.settings import DatabaseSettings

DATABASE = "kb_bench_watch"
TARGETS = {"edit_p50_s": 3.0, "edit_p95_s": 6.0, "idle_cpu_pct": 1.0, "switch_ratio": 1.2}
MAX_SWITCH_BUILDS = 2
#: Vendors with at most this many entities have every entity in find_vendor_info's
#: full answer (which lists at most 100).
MAX_ENTITIES = 60
#: A save not visible after this long counts as missed.
EDIT_TIMEOUT_S = 60.0
POLL_S = 0.1
SYLLABLES = ("vel", "mor", "quin", "trax", "zen", "bro", "dal", "fen", "kor", "lum", "rix")


class WatchProcess:
    """``python -m extraction watch --json`` on the bench database, its events."""

    def __init__(self, corpus: Path, env: dict[str, str], *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "extraction", "watch", str(corpus), "--json", *extra],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._new: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(
            target=lambda: self.stderr.extend(self.proc.stderr or []), daemon=True
        ).start()

    def _read(self) -> None:
        for line in self.proc.stdout or []:
            event = json.loads(line)
            event["_t"] = time.perf_counter()
            self.events.append(event)
            self._new.put(event)

    def ready(self, timeout: float = 900) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self._new.get(timeout=1.0)["event"] == "watching":
                    return
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
        raise SystemExit(f"the watcher did not start: {''.join(self.stderr)[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=120)


def _name(rng: random.Random) -> str:
    """A made-up company name of three different syllables."""
    return "".join(rng.sample(SYLLABLES, 3)).capitalize()


def _hashes(db: Database, paths: list[str]) -> dict[str, str]:
    with db.connect() as conn:
        rows = conn.execute(bench_queries()["watch_document_hashes"], {"paths": paths}).fetchall()
    return {r["source_path"]: r["content_hash"] for r in rows}


def _last_build(db: Database) -> int:
    with db.connect() as conn:
        row = conn.execute(bench_queries()["watch_last_build"]).fetchone()
    return int(row["id"]) if row else 0


def _builds_after(db: Database, after: int) -> int:
    with db.connect() as conn:
        row = conn.execute(bench_queries()["watch_builds_after"], {"after": after}).fetchone()
    return int(row["n"]) if row else 0


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _wait(predicate: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until ``predicate()`` held (asked every POLL_S), or None."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if predicate():
            return time.perf_counter() - start
        time.sleep(POLL_S)
    return None


def _found(service: Any, key: str, vendor: str, name: str) -> bool:
    """Whether semantic_search returns the sentence naming ``name``."""
    env, failed = service.call(
        "semantic_search",
        key,
        {"query": f"{vendor} partnership {name}", "response_mode": "full", "top_k": 5},
    )
    return not failed and name in str(env.get("results"))


def _shown(service: Any, key: str, vendor: str, name: str) -> bool:
    """Whether find_vendor_info (full) lists an entity named after ``name``."""
    env, failed = service.call(
        "find_vendor_info", key, {"vendor_name": vendor, "response_mode": "full"}
    )
    entities = (env.get("results") or {}).get("entities") or []
    return not failed and any(name in e["name"] for e in entities)


def measure_edits(db: Database, corpus: Path, n: int, console: Console) -> list[dict[str, Any]]:
    """Save a sentence into ``n`` drawn notes, one after the other; how long each
    took to show in semantic_search and find_vendor_info."""
    from bench.server import measuring_settings
    from search.embedder import Embedder
    from server.auth import KeyStore
    from server.service import Service

    with db.connect() as conn:
        rows = conn.execute(
            bench_queries()["watch_edit_candidates"], {"max_entities": MAX_ENTITIES}
        ).fetchall()
    candidates = [(r["source_path"], r["vendor"]) for r in rows]
    drawn = random.Random(41).sample(candidates, n)
    names = random.Random(time.time_ns())  # new names every run: nothing cached
    key = KeyStore(db).create(f"bench-watch-{os.getpid()}")
    service = Service(measuring_settings(key), db, embedder=Embedder.from_settings())
    results = []
    try:
        for i, (path, vendor) in enumerate(drawn):
            name = _name(names)
            sentence = (
                f"{vendor} announced a partnership with {name} Corporation. "
                f"{name} Corporation will offer support for it."
            )

            note = corpus / path
            with note.open("a", encoding="utf-8") as out:
                out.write(f"\n\n{sentence}\n")
            start = time.perf_counter()
            asked = (service, key, vendor, name)
            searched = _wait(functools.partial(_found, *asked), EDIT_TIMEOUT_S)
            left = EDIT_TIMEOUT_S - (time.perf_counter() - start)
            listed = _wait(functools.partial(_shown, *asked), left)
            both = (
                time.perf_counter() - start if searched is not None and listed is not None else None
            )
            results.append(
                {
                    "note": path,
                    "vendor": vendor,
                    "entity": name,
                    "search_s": searched,
                    "seconds": both,
                }
            )
            console.print(
                f"  edit {i + 1}/{n} {path}: "
                + (f"{both:.2f} s" if both is not None else f"not seen in {EDIT_TIMEOUT_S:.0f} s")
            )
            time.sleep(1.0)
    finally:
        service.close()
    return results


def measure_idle(pid: int, seconds: float) -> float:
    """CPU of process ``pid`` over ``seconds``, in per cent of one core."""
    import psutil

    proc = psutil.Process(pid)
    before = proc.cpu_times()
    start = time.perf_counter()
    time.sleep(seconds)
    after = proc.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    return 100.0 * used / (time.perf_counter() - start)


def _switch(corpus: Path, staged: Path, versions: dict[str, bytes]) -> None:
    """Write ``versions`` beside the corpus, then rename each into place (as git does)."""
    for i, data in enumerate(versions.values()):
        (staged / f"{i}.tmp").write_bytes(data)
    for i, path in enumerate(versions):
        os.replace(staged / f"{i}.tmp", corpus / path)


def measure_switches(
    db: Database,
    corpus: Path,
    env: dict[str, str],
    rounds: int,
    watcher: WatchProcess,
    console: Console,
) -> tuple[list[dict[str, Any]], WatchProcess]:
    notes = sorted(p.relative_to(corpus).as_posix() for p in (corpus / "vendors").rglob("*.md"))
    chosen = random.Random(42).sample(notes, 200)
    base = {p: (corpus / p).read_bytes() for p in chosen}
    staged = corpus.parent / "staged"
    staged.mkdir(exist_ok=True)
    out = []
    for r in range(rounds):
        changed = {
            p: data
            + (
                f"\n\n## Branch {r}\n\nOn branch {r} this note was revised: the team reviewed "
                f"{Path(p).stem.replace('-', ' ')} again in round {r} and noted what changed.\n"
            ).encode()
            for p, data in base.items()
        }
        order = ["watch", "rebuild"] if r % 2 == 0 else ["rebuild", "watch"]
        for tool, versions in zip(order, (changed, base), strict=True):
            expected = {p: _sha256(d) for p, d in versions.items()}
            if tool == "watch":
                if watcher.proc.poll() is not None:
                    watcher = WatchProcess(corpus, env)
                    watcher.ready()
                after = _last_build(db)
                seen = len(watcher.events)
                start = time.perf_counter()
                _switch(corpus, staged, versions)
                took = _wait(lambda e=expected: _hashes(db, list(e)) == e, 900)
                if took is None:
                    raise SystemExit("the watcher did not apply the branch switch in 900 s")
                took = time.perf_counter() - start
                time.sleep(2.0)  # a second build would be on its way by now
                builds = _builds_after(db, after)
                events = [e for e in watcher.events[seen:] if e["event"] == "build"]
                out.append(
                    {
                        "round": r,
                        "tool": "watch",
                        "seconds": took,
                        "builds": builds,
                        "build_seconds": [e["seconds"] for e in events],
                        "stage_seconds": [e["report"]["stage_seconds"] for e in events],
                    }
                )
            else:
                watcher.stop()
                _switch(corpus, staged, versions)
                took, report = rebuild(corpus, env)
                assert report["documents"]["changed"] == 200, report["documents"]
                out.append(
                    {
                        "round": r,
                        "tool": "rebuild-graph",
                        "seconds": took,
                        "builds": 1,
                        "stage_seconds": [report["stage_seconds"]],
                    }
                )
                watcher = WatchProcess(corpus, env)
                watcher.ready()
            console.print(f"  round {r + 1}/{rounds}: {tool} {took:.1f} s")
    return out, watcher


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.watch", __doc__)
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--edits", type=int, default=20, help="one-note edits (default 20)")
    parser.add_argument("--switches", type=int, default=3, help="branch-switch rounds (default 3)")
    parser.add_argument("--idle-s", type=float, default=30.0, help="idle seconds measured (30)")
    args = parser.parse_args(argv)
    if args.edits < 3 or args.switches < 1 or args.idle_s < 5:
        parser.error("--edits must be at least 3, --switches at least 1, --idle-s at least 5")
    console = Console()
    checked_corpus(args.corpus)
    db = named_database(server_conninfo(DatabaseSettings()), DATABASE)
    env = {**os.environ, "DATABASE_URL": db.conninfo}
    work = Path(tempfile.mkdtemp(prefix="kb-bench-watch-"))
    corpus = work / "corpus"
    shutil.copytree(args.corpus, corpus)
    watcher: WatchProcess | None = None
    try:
        console.print(f"bringing {db.description} up to date with a copy of {args.corpus} ...")
        proc = subprocess.run(
            [sys.executable, "-m", "extraction", "rebuild-graph", str(corpus), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"rebuild-graph of the corpus copy failed: {proc.stderr[-3000:]}")
        brought = json.loads(proc.stdout)
        console.print(f"  {brought['documents']} in {sum(brought['stage_seconds'].values()):.1f} s")
        console.print("starting the watcher ...")
        start = time.perf_counter()
        watcher = WatchProcess(corpus, env)
        watcher.ready()
        ready_s = time.perf_counter() - start
        console.print(f"  ready in {ready_s:.1f} s; {args.edits} one-note edits ...")
        edits = measure_edits(db, corpus, args.edits, console)
        console.print(f"idle for {args.idle_s:.0f} s ...")
        idle = measure_idle(watcher.proc.pid, args.idle_s)
        console.print(f"  {idle:.2f} % of a core; branch switches of 200 notes ...")
        switches, watcher = measure_switches(db, corpus, env, args.switches, watcher, console)
        watcher.stop()
        console.print(f"a polling watcher, idle for {args.idle_s:.0f} s ...")
        watcher = WatchProcess(corpus, env, "--poll")
        watcher.ready()
        idle_poll = measure_idle(watcher.proc.pid, args.idle_s)
        files = sum(1 for _ in (corpus / "vendors").rglob("*.md"))
    finally:
        if watcher is not None:
            watcher.stop()
        shutil.rmtree(work, ignore_errors=True)

    seen = [e["seconds"] for e in edits if e["seconds"] is not None]
    searched = [e["search_s"] for e in edits if e["search_s"] is not None]
    watch_s = [s["seconds"] for s in switches if s["tool"] == "watch"]
    rebuild_s = [s["seconds"] for s in switches if s["tool"] == "rebuild-graph"]
    most_builds = max(s["builds"] for s in switches if s["tool"] == "watch")
    figures = {
        "edit_p50_s": percentile(seen, 50) if seen else None,
        "edit_p95_s": percentile(seen, 95) if seen else None,
        "edits_missed": len(edits) - len(seen),
        "search_p50_s": percentile(searched, 50) if searched else None,
        "idle_cpu_pct": idle,
        "idle_cpu_poll_pct": idle_poll,
        "switch_watch_median_s": statistics.median(watch_s),
        "switch_rebuild_median_s": statistics.median(rebuild_s),
        "switch_ratio": statistics.median(watch_s) / statistics.median(rebuild_s),
        "switch_most_builds": most_builds,
        "watcher_ready_s": ready_s,
    }
    results = {
        "machine": machine(),
        "corpus": str(args.corpus),
        "files": files,
        "database": DATABASE,
        "figures": figures,
        "targets": {**TARGETS, "switch_most_builds": MAX_SWITCH_BUILDS},
        "edits": edits,
        "switches": switches,
    }

    def met(value: float | None, limit: float) -> str:
        return "-" if value is None else ("yes" if value <= limit else "NO")

    rows = [
        (
            f"save -> search and graph, p50 of the {len(seen)} seen",
            figures["edit_p50_s"],
            "s",
            TARGETS["edit_p50_s"],
        ),
        (
            f"save -> search and graph, p95 of the {len(seen)} seen",
            figures["edit_p95_s"],
            "s",
            TARGETS["edit_p95_s"],
        ),
        (f"save -> search only, p50 of {len(searched)}", figures["search_p50_s"], "s", None),
        (f"edits not seen in {EDIT_TIMEOUT_S:.0f} s", figures["edits_missed"], "", 0),
        (f"idle CPU over {args.idle_s:.0f} s (notifications)", idle, "%", TARGETS["idle_cpu_pct"]),
        ("idle CPU (--poll, KB_WATCH_POLL_MS)", idle_poll, "%", None),
        (
            f"200-note switch, watcher, median of {len(watch_s)}",
            figures["switch_watch_median_s"],
            "s",
            None,
        ),
        (
            f"200-note switch, rebuild-graph, median of {len(rebuild_s)}",
            figures["switch_rebuild_median_s"],
            "s",
            None,
        ),
        ("watcher / rebuild-graph", figures["switch_ratio"], "x", TARGETS["switch_ratio"]),
        ("most builds for one switch", most_builds, "", MAX_SWITCH_BUILDS),
        ("watcher start, models loaded", ready_s, "s", None),
    ]
    table = Table(title=f"Watcher benchmark: {files:,} notes")
    for col in ("measure", "value", "target", "met"):
        table.add_column(col)
    md = [
        f"# Watcher benchmark ({files:,} notes, {machine()['cpus']} cores)",
        "",
        "| measure | value | target | met |",
        "|---|---|---|---|",
    ]
    for label, value, unit, limit in rows:
        shown = "-" if value is None else f"{value:.2f} {unit}".strip()
        if isinstance(value, int):
            shown = str(value)
        target = "" if limit is None else f"<= {limit:g} {unit}".strip()
        verdict = "" if limit is None else met(value, limit)
        table.add_row(label, shown, target, verdict)
        md.append(f"| {label} | {shown} | {target} | {verdict} |")
    console.print(table)
    console.print(write_report("watch", results, [*md, ""]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
