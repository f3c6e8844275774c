"""Every server replica's metrics, shared through PostgreSQL.

Several ``python -m server`` processes behind one reverse proxy count their own calls;
a caller of ``get_server_metrics`` reaches one of them and should still see them all.
So each replica writes its own snapshot to ``server_replicas`` every
:data:`HEARTBEAT_S` seconds (one statement, on a thread of its own) and when it is
asked, and the answer lists every replica seen within :data:`LIVE_S` seconds, named,
each with its own figures: no sums across replicas, whose latency percentiles cannot
be added. A replica that stops deletes its row; one that dies drops out of the list.

A replica's name is ``KB_REPLICA_NAME`` when set (unique per replica), else
``host:port:pid`` (``host:stdio:pid`` for a desktop server).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from sql.database import Database
from sql.errors import DatabaseError
from sql.queries import queries

log = logging.getLogger(__name__)

#: Seconds between a replica's reports.
HEARTBEAT_S = 5.0
#: A replica not heard from for this long is not listed.
LIVE_S = 3 * HEARTBEAT_S


def replica_name(explicit: str | None, port: int | None) -> str:
    """``explicit`` if given, else ``host:port:pid`` (``host:stdio:pid``).

    >>> replica_name("eu-1", 8000)
    'eu-1'
    >>> replica_name(None, None).count(":")
    2
    """
    if explicit:
        return explicit
    return f"{socket.gethostname()}:{port if port else 'stdio'}:{os.getpid()}"


class ReplicaBoard:
    """This replica's row in ``server_replicas`` and a view of every live one.

    ``snapshot`` returns the replica's own metrics (JSON-ready). Reports run on a
    daemon thread; a database that cannot be reached is retried at the next beat.
    """

    def __init__(
        self,
        db: Database,
        name: str,
        snapshot: Callable[[], dict[str, Any]],
        *,
        interval: float = HEARTBEAT_S,
        start: bool = True,
        pool: ConnectionPool | None = None,
    ) -> None:
        self.db = db
        self.pool = pool
        self.name = name
        self.snapshot = snapshot
        self.interval = interval
        self.started_at = datetime.now(UTC)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._beat, name="replica-board", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while True:
            try:
                self.report()
            except (psycopg.Error, DatabaseError) as exc:
                log.debug("replica report failed: %s", type(exc).__name__)
            if self._stop.wait(self.interval):
                return

    def report(self, conn: psycopg.Connection[dict[str, Any]] | None = None) -> None:
        """Write this replica's metrics now, on ``conn`` or a connection of its own
        (raises ``psycopg.Error`` or :class:`~sql.errors.DatabaseError` when the
        database cannot be reached)."""
        params = {
            "name": self.name,
            "started_at": self.started_at,
            "metrics": Jsonb(self.snapshot()),
        }
        if conn is not None:
            conn.execute(queries()["report_replica"], params)
            return
        with self.db.connect(autocommit=True) as own:
            own.execute(queries()["report_replica"], params)

    def live(self) -> list[dict[str, Any]]:
        """Every replica heard from within :data:`LIVE_S` s, this one first reported
        anew, by name: ``name``, ``started_at``, ``seen_at`` and its metrics.

        On a connection of ``pool`` when the board has one: a connection of its
        own each time (with its type look-ups) made ``get_server_metrics`` take
        15 ms against 1.6 before the board existed."""
        with self._connection() as conn:
            self.report(conn)
            rows = conn.execute(queries()["live_replicas"], {"within_s": LIVE_S}).fetchall()
        return [
            {
                "name": r["name"],
                "self": r["name"] == self.name,
                "started_at": r["started_at"].isoformat(),
                "seen_at": r["seen_at"].isoformat(),
                **r["metrics"],
            }
            for r in rows
        ]

    def _connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        if self.pool is not None:
            return self.pool.connection(timeout=self.db.connect_timeout)
        return self.db.connect(autocommit=True)

    def close(self) -> None:
        """Stop reporting and take this replica's row away."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 1)
        try:
            with self.db.connect(autocommit=True) as conn:
                conn.execute(queries()["forget_replica"], {"name": self.name})
        except (psycopg.Error, DatabaseError) as exc:
            log.debug("replica row not removed: %s", type(exc).__name__)
