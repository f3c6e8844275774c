"""The newest complete graph build, known without asking on every call.

Every cached answer belongs to one graph build. Asking the database which
build is newest costs a round trip (three with the read-only transaction
around it), more than serving the answer itself. :class:`BuildWatcher` keeps
one connection that LISTENs on ``kb_graph_builds``: a trigger on
``graph_builds`` (migration 0006) notifies it when a transaction that changed
builds commits, and it rereads the newest complete build then, and every few
seconds as a liveness check.

:meth:`BuildWatcher.current` is that build while the connection is listening,
and None otherwise (starting, database unreachable, reconnecting): callers then
ask the database themselves, as they would without a watcher. A rebuild that
commits is seen once its notification arrives (a millisecond on one machine);
an answer served in between comes, whole, from the build before.

Speed layer ``build-watcher`` (``KB_PLAIN_PATHS``): the plain path starts no
watcher, so every call asks the database for the newest build (the round trip
above) and no cached answer is served before that query.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import psycopg

from sql import DatabaseError
from sql.database import Database
from sql.queries import queries

log = logging.getLogger("server")

CHANNEL = "kb_graph_builds"
APPLICATION_NAME = "kb-build-watcher"  # how its connection shows in pg_stat_activity


class BuildWatcher:
    """A thread that follows the newest complete graph build of ``db``."""

    def __init__(
        self,
        db: Database,
        *,
        poll_s: float = 0.5,
        refresh_s: float = 5.0,
        max_backoff_s: float = 2.0,
    ) -> None:
        self._db = db
        self._poll_s = poll_s
        self._refresh_every = max(1, round(refresh_s / poll_s))
        self._max_backoff_s = max_backoff_s
        self._build: int | None = None
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="build-watcher", daemon=True)
        self._thread.start()

    def current(self) -> int | None:
        """The newest complete build, or None when it is not known for sure."""
        with self._changed:
            return self._build

    def wait_for(self, build: int | None = None, timeout: float = 10.0) -> bool:
        """Block until the watcher knows a build (``build`` or newer, when given);
        False after ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._build is not None and (build is None or self._build >= build),
                timeout,
            )

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._poll_s + 5.0)

    def _set(self, build: int | None) -> None:
        with self._changed:
            self._build = build
            self._changed.notify_all()

    def _read(self, conn: psycopg.Connection[Any]) -> None:
        row = conn.execute(queries()["kg_build_marker"]).fetchone()
        self._set(int(row["build_id"]) if row else 0)

    def _run(self) -> None:
        backoff = 0.05
        while not self._stop.is_set():
            try:
                with self._db.connect(autocommit=True) as conn:
                    conn.execute(queries()["set_application_name"], {"name": APPLICATION_NAME})
                    conn.execute(queries()["listen_graph_builds"])
                    self._read(conn)  # after LISTEN: no commit can fall in between
                    backoff = 0.05
                    idle = 0
                    while not self._stop.is_set():
                        notified = False
                        for _ in conn.notifies(timeout=self._poll_s, stop_after=1):
                            notified = True
                        idle = 0 if notified else idle + 1
                        if notified or idle >= self._refresh_every:
                            idle = 0
                            self._read(conn)  # also proves the connection alive
            except (psycopg.Error, DatabaseError, OSError) as exc:
                if self._build is not None:
                    log.info("graph build watcher lost its connection (%s)", type(exc).__name__)
            self._set(None)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self._max_backoff_s)
