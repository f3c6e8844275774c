"""Shared by the load, fault and fuzz tests: a database fingerprint, and figures
recorded for ``docs/reliability.md``.

``python -m bench.reliability`` runs those tests with ``KB_RELIABILITY_DIR`` set;
every figure a test passes to :func:`record` lands in a JSON file there and the
report is rendered from those files, so each number in it comes from a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql as pgsql

RELIABILITY_DIR = "KB_RELIABILITY_DIR"


#: Tables every call changes by design: the token levels and the running servers' metrics.
LIVE_TABLES = ("rate_buckets", "server_replicas")


def fingerprint(
    conninfo: str, *, skip: tuple[str, ...] = LIVE_TABLES, timestamps: bool = True
) -> dict[str, tuple[int, str]]:
    """Row count and an MD5 of the full content (rows in a stable order) of every
    table in the ``public`` schema but ``skip``; without ``timestamps``, columns of
    a timestamp type are left out (to compare two databases built at different
    times). Equal fingerprints mean the same rows."""
    out: dict[str, tuple[int, str]] = {}
    with psycopg.connect(conninfo, autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND NOT tablename = ANY(%s) ORDER BY 1",
                (list(skip),),
            )
        ]
        for table in tables:
            columns = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = 'public' AND table_name = %s "
                    "AND (%s OR data_type NOT LIKE 'timestamp%%') ORDER BY ordinal_position",
                    (table, timestamps),
                )
            ]
            row = conn.execute(
                pgsql.SQL(
                    "SELECT count(*), coalesce(md5(string_agg(r::text, E'\\n' ORDER BY r::text)), "
                    "'') FROM (SELECT {} FROM {}) AS r"
                ).format(
                    pgsql.SQL(", ").join(pgsql.Identifier(c) for c in columns),
                    pgsql.Identifier(table),
                )
            ).fetchone()
            assert row is not None
            out[table] = (int(row[0]), str(row[1]))
    return out


def record(test: str, **figures: Any) -> None:
    """Add ``figures`` to the record of ``test`` (a short stable name) when a
    reliability run asked for them; otherwise do nothing."""
    folder = os.environ.get(RELIABILITY_DIR)
    if not folder:
        return
    path = Path(folder) / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', test)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(path.read_text()) if path.exists() else {"test": test}
    current.update(figures)
    path.write_text(json.dumps(current, indent=2, sort_keys=True, default=str) + "\n")


def digest_of(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
