"""Worker processes for a rebuild's units (see :mod:`extraction.rebuild.work`).

- :class:`Worker` is ``python -m extraction worker``: it claims units of running
  builds made with its own models, on any machine with ``DATABASE_URL``, and
  survives a database that drops its connection (it reconnects and finishes the
  unit it holds if the claim is still its own). The rebuilding process works
  through its own units with the same class (no reconnecting there).
- :class:`LocalWorkers` is ``rebuild-graph --workers N``: N such processes for
  one build, watched by the rebuilding process, which ends the claims of any
  that exits and fails clearly if all exit before the work is done.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from extraction.rebuild.work import (
    KINDS,
    Conn,
    Unit,
    UnitRunner,
    build_progress,
    claim,
    release,
    worker_name,
)
from sql import queries
from sql.database import Database
from sql.settings import usable_cores

#: Longest a worker keeps trying to reach a database that went away.
RECONNECT_FOR_S = 120.0


class WorkerError(Exception):
    """The worker cannot go on (wrong models for its build, database gone for good)."""


class Stop(Exception):
    """SIGTERM: give the held unit back and end."""


@dataclass(slots=True)
class WorkerReport:
    name: str
    units: dict[str, int] = field(default_factory=lambda: {"embed": 0, "extract": 0})
    chunks: dict[str, int] = field(default_factory=lambda: {"embed": 0, "extract": 0})
    dropped: int = 0
    """Units computed here whose claim had moved on (lease ran out): results dropped."""
    reconnects: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "worker": self.name,
            "units": self.units,
            "chunks": self.chunks,
            "dropped": self.dropped,
            "reconnects": self.reconnects,
            "seconds": round(self.seconds, 3),
        }


class Worker:
    """Claims and computes units until told to stop (or, with ``build_id``,
    until that build's units are all done)."""

    def __init__(
        self,
        db: Database,
        runner: UnitRunner,
        models: dict[str, str],
        *,
        lease_s: float,
        poll_s: float = 1.0,
        name: str | None = None,
        prefer: str = "embed",
        reconnect_for_s: float = RECONNECT_FOR_S,
        log: Callable[[str], None] = lambda line: None,
    ) -> None:
        """``reconnect_for_s``: how long to keep reopening a lost connection (0:
        the database error is raised at once, as the rebuilding process wants)."""
        self.db = db
        self.runner = runner
        self.models = models
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.name = name or worker_name()
        self.prefer = prefer
        self.reconnect_for_s = reconnect_for_s
        self.log = log
        self._conn: Conn | None = None
        self._warned: set[int] = set()

    # -- connection, re-established when the database drops it ------------------
    def _connection(self) -> Conn:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self.db.connect()
            self._conn.execute(queries()["listen_work_units"])
            self._conn.commit()
        return self._conn

    def _retry(self, what: str, action: Callable[[Conn], Any], report: WorkerReport) -> Any:
        """``action`` on a live connection; a lost connection is opened again with
        backoff (up to ``reconnect_for_s``) and ``action`` repeated."""
        from sql import DatabaseError

        deadline = time.monotonic() + self.reconnect_for_s
        delay = 0.5
        while True:
            try:
                return action(self._connection())
            except (psycopg.OperationalError, psycopg.InterfaceError, DatabaseError) as exc:
                if self._conn is not None and not self._conn.closed:
                    self._conn.close()
                self._conn = None
                if self.reconnect_for_s <= 0:
                    raise
                if time.monotonic() > deadline:
                    raise WorkerError(
                        f"lost the database while {what} and could not reconnect for "
                        f"{self.reconnect_for_s:.0f} s: {str(exc).strip().splitlines()[0]}"
                    ) from None
                self.log(f"lost the database while {what}; reconnecting in {delay:.1f} s")
                report.reconnects += 1
                time.sleep(delay)
                delay = min(delay * 2, 10.0)

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()

    # -- the loop ------------------------------------------------------------
    def run(
        self,
        build_id: int | None = None,
        *,
        kinds: Sequence[str] = KINDS,
        until_idle: bool = False,
        on_done: Callable[[Unit], None] = lambda unit: None,
    ) -> WorkerReport:
        """Claim and compute units (of ``kinds``; of ``build_id`` only, if given)
        until stopped, until none is left to claim (``until_idle``), or, with a
        build, until its units of ``kinds`` are all done by this or any worker."""
        report = WorkerReport(self.name)
        start = time.perf_counter()
        try:
            if build_id is not None:
                self._check_build(build_id, report)
            while True:
                unit = self._retry(
                    "claiming a unit",
                    lambda c: claim(
                        c,
                        self.name,
                        self.models,
                        lease_s=self.lease_s,
                        build_id=build_id,
                        kinds=kinds,
                        prefer=self.prefer,
                    ),
                    report,
                )
                if unit is None:
                    if self._finished(build_id, kinds, report) or until_idle:
                        return report
                    self._wait()
                    continue
                if self._work(unit, report):
                    on_done(unit)
        finally:
            report.seconds = time.perf_counter() - start
            self.close()

    def _work(self, unit: Unit, report: WorkerReport) -> bool:
        """Compute and store ``unit``; False when its claim had moved on."""
        began = time.perf_counter()
        try:
            rows = self.runner.compute(unit)
        except BaseException:
            if self._conn is not None and not self._conn.broken:
                release(self._conn, unit, self.name)
            raise
        finished = self._retry(
            "storing a unit", lambda c: self.runner.finish(c, unit, self.name, rows), report
        )
        if finished:
            report.units[unit.kind] += 1
            report.chunks[unit.kind] += unit.size
            self.log(
                f"build {unit.build_id}: {unit.kind} unit {unit.id} "
                f"({unit.size} chunks) in {time.perf_counter() - began:.2f} s"
            )
        else:
            report.dropped += 1
            self.log(f"build {unit.build_id}: unit {unit.id} was claimed again; results dropped")
        return bool(finished)

    def _wait(self) -> None:
        """Sleep until a rebuild queues units (a notification) or ``poll_s`` passes
        (a lease may run out meanwhile)."""
        conn = self._connection()
        try:
            for _ in conn.notifies(timeout=self.poll_s, stop_after=1):
                pass
        except (psycopg.OperationalError, psycopg.InterfaceError):
            self.close()
            self._conn = None

    def _check_build(self, build_id: int, report: WorkerReport) -> None:
        row = self._retry(
            "reading its build",
            lambda c: c.execute(queries()["build_status"], {"id": build_id}).fetchone(),
            report,
        )
        if row is None:
            raise WorkerError(f"build {build_id} does not exist")
        if row["models"] != self.models:
            raise WorkerError(_mismatch(build_id, row["models"], self.models))

    def _finished(self, build_id: int | None, kinds: Sequence[str], report: WorkerReport) -> bool:
        """With a build: True once it is no longer running or has nothing left.
        Without one: says once per build which builds it cannot serve."""

        def look(conn: Conn) -> Any:
            if build_id is not None:
                status = conn.execute(queries()["build_status"], {"id": build_id}).fetchone()
                left = build_progress(conn, build_id).left(kinds)
                return status is None or status["status"] != "running" or left == 0
            rows = list(conn.execute(queries()["foreign_work"], {"models": Jsonb(self.models)}))
            conn.commit()
            return rows

        found = self._retry("looking for work", look, report)
        if build_id is not None:
            return bool(found)
        for row in found:
            if int(row["id"]) not in self._warned:
                self._warned.add(int(row["id"]))
                self.log(_mismatch(int(row["id"]), row["models"], self.models))
        return False


def _mismatch(build_id: int, wanted: dict[str, str], have: dict[str, str]) -> str:
    diff = ", ".join(
        f"{k} {wanted.get(k)!r} (this worker: {have.get(k)!r})"
        for k in sorted(set(wanted) | set(have))
        if wanted.get(k) != have.get(k)
    )
    return (
        f"build {build_id} needs {diff}; this worker leaves its units to matching workers "
        "(run the same version of the code and models as the rebuild)"
    )


def install_stop_on_sigterm() -> None:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stop()

    signal.signal(signal.SIGTERM, stop)


class LocalWorkers:
    """``n`` worker processes for one build, their output kept in log files.

    They take turns in what they prefer (embed, extract, embed, ...), so that
    embedding and spaCy run side by side rather than one after the other, and
    unless ``OMP_NUM_THREADS`` is set each gets an even share of the cores for
    its math libraries (torch would otherwise start one thread per core in every
    worker). Measured in ``bench.workers`` (docs/deploy.md).
    """

    def __init__(self, n: int, build_id: int, *, env: dict[str, str] | None = None) -> None:
        self.n = n
        self.build_id = build_id
        self.env = env
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Path] = []
        self._seen_exit: set[int] = set()
        self._dir = tempfile.TemporaryDirectory(prefix="kb-workers-")

    def __enter__(self) -> LocalWorkers:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("OMP_NUM_THREADS", str(max(1, usable_cores() // self.n)))
        for i in range(self.n):
            log = Path(self._dir.name) / f"worker-{i + 1}.log"
            self._logs.append(log)
            with log.open("wb") as out:
                self._procs.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "extraction",
                            "worker",
                            "--build",
                            str(self.build_id),
                            "--prefer",
                            KINDS[i % len(KINDS)],
                        ],
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        env=env,
                    )
                )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                if exc_type is None:
                    try:  # they end by themselves once the build's units are done
                        proc.wait(timeout=30)
                        continue
                    except subprocess.TimeoutExpired:
                        pass
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._dir.cleanup()

    @property
    def names(self) -> list[str]:
        host = socket.gethostname()
        return [f"{host}:{p.pid}" for p in self._procs]

    def check(self, conn: Conn) -> None:
        """End the claims of workers that exited; fail when none is left."""
        for i, proc in enumerate(self._procs):
            if proc.poll() is not None and i not in self._seen_exit:
                self._seen_exit.add(i)
                conn.execute(
                    queries()["release_worker_units"],
                    {"build_id": self.build_id, "worker": self.names[i]},
                )
                conn.commit()
        if len(self._seen_exit) == len(self._procs) and build_progress(conn, self.build_id).left():
            details = "; ".join(
                f"worker {i + 1} exit {p.returncode}: {_last_line(self._logs[i])}"
                for i, p in enumerate(self._procs)
            )
            raise WorkerError(f"every worker process ended before the work was done ({details})")


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no output"
    return lines[-1][:300] if lines else "no output"
