"""Lifecycle benchmark: ``python -m bench.lifecycle [--repeats N]``.

On the shared vendor corpus (database ``kb_eval_vendor_corpus``, brought up to date
first, as the evaluation harnesses do), in one run, p50 / p95 in milliseconds of:

1. **one vendor** (the vendor with the most release cycles): the bare SQL (the two
   statements that read its products and cycles), ``KnowledgeGraph.lifecycle`` (the
   statements plus status, resolution and answer objects), and ``get_lifecycle`` in
   the server process, uncached (a new ``as_of`` every call, so every call computes)
   and cached;
2. **eol-risk over every cycle** (all vendors, all 8,351 cycles searched), the next
   365 days: the bare ``kg_eol_risk`` statement, ``KnowledgeGraph.eol_risk`` and
   ``get_lifecycle(within_days=365)`` uncached and cached; and, without a target,
   the same with a window that holds every dated end of support.

Calls use the tool's defaults (50 cycles or ends of support per page, metadata mode).

"Server-side" is the service's own call (``Service.call``: admission, snapshot,
cache, tool, envelope with its token count), as the other server benchmarks measure
it, without the MCP transport. Targets: one vendor uncached p50 <= 20 ms, eol-risk
over all cycles p50 <= 30 ms, cached <= 2 ms. Results go to
``bench/results/lifecycle.json`` and ``lifecycle.md``.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import bench_queries, machine, measuring_parser, parse_measuring, write_results
from bench.server import measuring_settings
from evals.corpus import build_vendor_corpus, default_corpus, eval_database
from kg.store import KnowledgeGraph
from search.embedder import Embedder
from search.metrics import percentile
from server.auth import KeyStore
from server.service import Service
from sql.queries import queries

TARGETS = {"vendor_uncached": 20.0, "risk_uncached": 30.0, "cached": 2.0}
#: The risk window the targets are for (the notebook's next 12 months).
RISK_DAYS = 365
#: A window that holds every dated end of support in the corpus (to 2050).
ALL_DAYS = 9_000
AS_OF = dt.date(2026, 11, 25)


def timed(fn: Callable[[int], Any], repeats: int) -> dict[str, float]:
    """p50 / p95 milliseconds of ``fn(i)`` over ``repeats`` calls after one warm-up."""
    fn(-1)
    values = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i)
        values.append((time.perf_counter() - start) * 1000)
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = measuring_parser(
        "lifecycle",
        __doc__,
        repeats=51,
        what="calls per measure",
        corpus=default_corpus(),
    )
    args = parse_measuring(parser, argv)
    console = Console()
    db = eval_database()
    console.print(f"bringing {db.description} up to date with {args.corpus} ...")
    build_vendor_corpus(db, args.corpus, quiet=True)
    q, b = queries(), bench_queries()
    with db.connect() as conn:
        top = conn.execute(b["lifecycle_largest_vendor"]).fetchone()
        cycles = conn.execute(b["lifecycle_cycle_count"]).fetchone()
    assert top is not None and cycles is not None
    vendor, vendor_id = top["vendor"], top["vendor_id"]
    key = KeyStore(db).create(f"bench-lifecycle-{os.getpid()}")
    service = Service(measuring_settings(key), db, embedder=Embedder.from_settings())
    kg = KnowledgeGraph(db.pool(min_size=1, max_size=2))
    rows: dict[str, dict[str, float]] = {}

    def day(i: int) -> str:
        return (AS_OF + dt.timedelta(days=i + 1)).isoformat()

    def server(arguments: dict[str, Any]) -> None:
        env, failed = service.call("get_lifecycle", key, arguments)
        if failed:
            raise SystemExit(f"get_lifecycle {arguments}: {env['error']}")

    try:
        with db.connect() as conn:

            def bare_vendor(_: int) -> None:
                products = conn.execute(
                    q["kg_lifecycle_products"], {"vendor_id": vendor_id}
                ).fetchall()
                ids = [r["document_id"] for r in products]
                conn.execute(q["kg_lifecycle_cycles"], {"document_ids": ids}).fetchall()
                conn.rollback()

            def bare_risk(days: int) -> Callable[[int], None]:
                def run(_: int) -> None:
                    conn.execute(
                        q["kg_eol_risk"],
                        {
                            "as_of": AS_OF,
                            "until": AS_OF + dt.timedelta(days=days),
                            "vendor_id": None,
                            "category": None,
                            "limit": 100_000,
                        },
                        prepare=False,
                    ).fetchall()
                    conn.rollback()

                return run

            rows["one vendor: bare SQL"] = timed(bare_vendor, args.repeats)
            for days, label in ((RISK_DAYS, "eol-risk, 365 days"), (ALL_DAYS, "eol-risk, all")):
                rows[f"{label}: bare SQL"] = timed(bare_risk(days), args.repeats)
        rows["one vendor: KnowledgeGraph.lifecycle"] = timed(
            lambda i: kg.lifecycle(vendor, as_of=AS_OF), args.repeats
        )
        rows["one vendor: get_lifecycle uncached"] = timed(
            lambda i: server({"vendor_name": vendor, "as_of": day(i)}), args.repeats
        )
        rows["one vendor: get_lifecycle cached"] = timed(
            lambda i: server({"vendor_name": vendor, "as_of": day(0)}), args.repeats
        )
        for days, label in ((RISK_DAYS, "eol-risk, 365 days"), (ALL_DAYS, "eol-risk, all")):
            rows[f"{label}: KnowledgeGraph.eol_risk"] = timed(
                lambda i, days=days: kg.eol_risk(within_days=days, as_of=AS_OF), args.repeats
            )
            rows[f"{label}: get_lifecycle uncached"] = timed(
                lambda i, days=days: server({"within_days": days, "as_of": day(i)}), args.repeats
            )
            rows[f"{label}: get_lifecycle cached"] = timed(
                lambda i, days=days: server({"within_days": days, "as_of": day(0)}), args.repeats
            )
        events = len(kg.eol_risk(within_days=RISK_DAYS, as_of=AS_OF))
        every = len(kg.eol_risk(within_days=ALL_DAYS, as_of=AS_OF))
    finally:
        service.close()
        KeyStore(db).revoke(f"bench-lifecycle-{os.getpid()}")

    checks = {
        "one vendor uncached p50": (
            rows["one vendor: get_lifecycle uncached"]["p50"],
            TARGETS["vendor_uncached"],
        ),
        "eol-risk (365 days) uncached p50": (
            rows["eol-risk, 365 days: get_lifecycle uncached"]["p50"],
            TARGETS["risk_uncached"],
        ),
        "one vendor cached p50": (
            rows["one vendor: get_lifecycle cached"]["p50"],
            TARGETS["cached"],
        ),
        "eol-risk (365 days) cached p50": (
            rows["eol-risk, 365 days: get_lifecycle cached"]["p50"],
            TARGETS["cached"],
        ),
    }
    results = {
        "machine": machine(),
        "database": db.description,
        "vendor": vendor,
        "vendor_cycles": top["cycles"],
        "cycles": cycles["n"],
        "risk_events_365_days": events,
        "risk_events_all": every,
        "as_of": AS_OF.isoformat(),
        "repeats": args.repeats,
        "ms": rows,
        "targets_ms": TARGETS,
        "met": {name: value <= limit for name, (value, limit) in checks.items()},
    }
    write_results(args.out, results)
    table = Table(
        title=f"Lifecycle: {vendor} ({top['cycles']} cycles); eol-risk over {cycles['n']:,} "
        f"cycles ({events:,} ends of support in 365 days, {every:,} in all), ms"
    )
    for col in ("measure", "p50", "p95"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for name, v in rows.items():
        table.add_row(name, f"{v['p50']:.2f}", f"{v['p95']:.2f}")
    console.print(table)
    for name, (value, limit) in checks.items():
        console.print(
            f"{name}: {value:.2f} ms (target <= {limit} ms) {'met' if value <= limit else 'MISSED'}"
        )
    md = args.out.with_suffix(".md")
    with md.open("w") as fh:
        Console(file=fh, width=110).print(table)
    console.print(f"results written to {args.out} and {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
