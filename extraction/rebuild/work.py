"""A rebuild's embed and extract work as units in PostgreSQL, claimed by workers.

The rebuild (``rebuild-graph``, ``ingest``) splits the chunks the work caches
lack into units of ``KB_STORE_BATCH`` chunks in table ``work_units``. Any
process with the same models and extractor version works through them: the
rebuilding process itself (the default), ``--workers N`` local processes, or
``python -m extraction worker`` on other machines with ``DATABASE_URL``. The
rebuild publishes, in its one transaction, once every unit is done.

Why ``FOR UPDATE SKIP LOCKED`` on our own table rather than a job-queue library
(procrastinate, pgqueuer): a unit's results and its "done" mark must commit in
one transaction with the work caches, and only while the unit is still its
claimant's. That check is one ``SELECT ... FOR UPDATE`` inside the worker's own
transaction; a queue library marks jobs done in its own transaction after the
task returns, and would bring its own schema, async worker and retry policy for
what is four statements here (``sql/work.sql``).

Guarantees:

- **A killed worker loses nothing.** A claim is a lease on the database's clock
  (``KB_WORKER_LEASE_S``, machines' clocks never matter); once it runs out the
  unit is claimed again. A rebuild that sees one of its local workers exit ends
  that worker's claims at once.
- **No unit is done twice into the caches.** Results are written only in the
  transaction that finds the unit still held by this claim (same worker, same
  attempt, not done); a claim that lost its unit drops its results.
- **Same output as one process.** Units are cut the same way whoever runs them,
  and each is computed in one ``encode`` / ``extract_many`` call, so the
  knowledge base a set of workers publishes equals the single-process one.
- **Only matching workers claim.** A unit is claimed only by a worker whose
  embedding model, spaCy model and extractor version equal the build's
  (``graph_builds.models``); another one says which build it cannot serve.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from extraction.models import ExtractionContext
from extraction.rebuild.codec import result_to_json
from sql import queries

if TYPE_CHECKING:
    from extraction.nlp.extractor import Extractor
    from search.embedder import Embedder

KINDS = ("embed", "extract")

Conn = psycopg.Connection[dict[str, Any]]


def worker_name() -> str:
    """``host:pid``: unique among live workers, readable in ``work_units``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True, slots=True)
class Unit:
    id: int
    build_id: int
    kind: str
    items: list[Any]
    size: int
    attempts: int


def embed_item(content_hash: str, text: str) -> list[Any]:
    return [content_hash, text]


def extract_item(key: str, text: str, context: ExtractionContext) -> list[Any]:
    return [
        key,
        text,
        context.vendor,
        [list(seed) for seed in context.known_entities],
        context.subject,
    ]


def _context(item: Sequence[Any]) -> ExtractionContext:
    return ExtractionContext(
        vendor=item[2],
        known_entities=tuple((str(s), str(t)) for s, t in item[3]),
        # a unit queued by a worker of the previous version has no subject
        subject=item[4] if len(item) > 4 else None,
    )


def enqueue(
    conn: Conn, build_id: int, kind: str, items: Sequence[list[Any]], unit_size: int
) -> int:
    """Cut ``items`` into units of ``unit_size`` in order and queue them (not
    committed). Returns the number of units."""
    units = [Jsonb(list(items[i : i + unit_size])) for i in range(0, len(items), unit_size)]
    if units:
        conn.execute(
            queries()["enqueue_work_units"], {"build_id": build_id, "kind": kind, "units": units}
        )
    return len(units)


def notify(conn: Conn, build_id: int) -> None:
    conn.execute(queries()["notify_work_units"], {"build_id": build_id})


def claim(
    conn: Conn,
    worker: str,
    models: dict[str, str],
    *,
    lease_s: float,
    build_id: int | None = None,
    kinds: Iterable[str] = KINDS,
    prefer: str = "embed",
) -> Unit | None:
    """Claim one unit, of kind ``prefer`` if there is one, and commit the claim;
    None when nothing is claimable now."""
    unit = (
        conn.cursor(row_factory=class_row(Unit))
        .execute(
            queries()["claim_work_unit"],
            {
                "worker": worker,
                "lease_s": lease_s,
                "models": Jsonb(models),
                "build_id": build_id,
                "kinds": list(kinds),
                "prefer": prefer,
            },
        )
        .fetchone()
    )
    conn.commit()
    return unit


def release(conn: Conn, unit: Unit, worker: str) -> None:
    """Give a claimed unit back at once (a worker that stops before finishing it)."""
    conn.rollback()
    conn.execute(
        queries()["release_work_unit"],
        {"id": unit.id, "worker": worker, "attempts": unit.attempts},
    )
    conn.commit()


@dataclass(slots=True)
class BuildProgress:
    """Per kind: units not done, items (chunks) done and in all."""

    pending: dict[str, int] = field(default_factory=dict)
    done_items: dict[str, int] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)

    def left(self, kinds: Iterable[str] = KINDS) -> int:
        return sum(self.pending.get(k, 0) for k in kinds)


def build_progress(conn: Conn, build_id: int) -> BuildProgress:
    out = BuildProgress()
    for r in conn.execute(queries()["work_progress"], {"build_id": build_id}):
        kind = str(r["kind"])
        out.pending[kind] = int(r["pending"])
        out.done_items[kind] = int(r["done_items"])
        out.items[kind] = int(r["items"])
    conn.commit()
    return out


class UnitRunner:
    """Computes a unit (one ``encode`` or ``extract_many`` call) and writes its
    results into the work caches, if the unit is still this claim's."""

    def __init__(
        self,
        embedding_model: str,
        embedder: Callable[[], Embedder],
        extractor: Callable[[], Extractor],
    ) -> None:
        self.embedding_model = embedding_model
        self._embedder = embedder
        self._extractor = extractor

    def compute(self, unit: Unit) -> list[tuple[Any, ...]]:
        """The cache rows of ``unit``, in its order."""
        if unit.kind == "embed":
            vectors = self._embedder().encode([str(item[1]) for item in unit.items])
            return [
                (self.embedding_model, item[0], v)
                for item, v in zip(unit.items, vectors, strict=True)
            ]
        results = self._extractor().extract_many((str(i[1]), _context(i)) for i in unit.items)
        return [
            (item[0], orjson.dumps(result_to_json(result)).decode())
            for item, result in zip(unit.items, results, strict=True)
        ]

    def finish(self, conn: Conn, unit: Unit, worker: str, rows: list[tuple[Any, ...]]) -> bool:
        """Write ``rows`` and mark ``unit`` done in one transaction, only if the
        claim still holds it; False (nothing written) when it does not."""
        q = queries()
        held = conn.execute(
            q["hold_work_unit"], {"id": unit.id, "worker": worker, "attempts": unit.attempts}
        ).fetchone()
        if held is None:
            conn.rollback()
            return False
        if unit.kind == "embed":
            with conn.cursor().copy(q["copy_embedding_cache"]) as copy:
                copy.set_types(["text", "text", "vector"])
                for row in rows:
                    copy.write_row(row)
        else:
            with conn.cursor().copy(q["copy_extraction_cache"]) as copy:
                for row in rows:
                    copy.write_row(row)
        conn.execute(q["finish_work_unit"], {"id": unit.id})
        conn.commit()
        return True
