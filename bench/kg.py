"""Vendor graph benchmark: ``python -m bench.kg [--repeats N]``.

In one run, on synthetic vendors of 1k, 10k and 50k relationships (database
``kb_bench_graph``) and on the largest vendors of ``../shared/data/vendor_corpus``
(database ``kb_eval_vendor_corpus``, brought up to date as
``python -m evals disambiguation`` does), p50 / p95 in milliseconds of:

1. **floor** - bare SQL ``count(*) ... GROUP BY type`` over the vendor's relationships;
2. **load** - ``KnowledgeGraph.graph`` with empty caches (resolve + 2 queries + networkx);
3. **stats** cold / cached - ``KnowledgeGraph.statistics`` (load + PageRank + counts);
4. **capped** cold / cached - ``KnowledgeGraph.capped`` (100 entities / 500 relationships);
5. **path** - ``find_path`` between random entity pairs on the cached graph.

"Cold" is a new ``KnowledgeGraph`` (empty caches) on a warm connection pool, as a
server sees a vendor for the first time after a graph build. Targets at 10k
relationships: stats p50 <= 20 ms cold, capped p50 <= 50 ms cold and <= 1 ms
cached. Results go to ``bench/results/kg.json`` and ``kg.md``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from psycopg.types.json import Jsonb
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench import machine, measuring_parser, parse_measuring, write_results
from evals import eval_queries
from evals.corpus import EVAL_DATABASE, build_vendor_corpus, default_corpus
from kg.settings import GraphSettings
from kg.store import KnowledgeGraph
from search.metrics import percentile
from sql.database import Database, named_database, server_conninfo
from sql.queries import queries
from sql.settings import DatabaseSettings

BENCH_DATABASE = "kb_bench_graph"
SIZES = (1_000, 10_000, 50_000)
ENTITY_TYPES = ("ORG", "PRODUCT", "PERSON", "LOCATION", "EVENT")
RELATIONSHIP_TYPES = (
    "MENTIONED_WITH",
    "PRODUCES",
    "PARTNERS_WITH",
    "WORKS_FOR",
    "LOCATED_IN",
    "COMPETES_WITH",
)
TARGETS = {"stats_cold": 20.0, "capped_cold": 50.0, "capped_cached": 1.0}


def synthetic_edges(n_relationships: int, seed: int) -> tuple[int, list[tuple[int, int, str]]]:
    """A preferential-attachment graph: a few hubs, a long tail (like real vendors)."""
    rng = random.Random(seed)
    n_entities = max(10, n_relationships // 5)
    ends = [0, 1]
    seen: set[tuple[int, int, str]] = set()
    while len(seen) < n_relationships:
        source = rng.randrange(n_entities) if rng.random() < 0.5 else rng.choice(ends)
        target = rng.randrange(n_entities)
        if source == target:
            continue
        edge = (source, target, rng.choice(RELATIONSHIP_TYPES))
        if edge not in seen:
            seen.add(edge)
            ends += [source, target]
    return n_entities, sorted(seen)


def load_synthetic(db: Database, sizes: tuple[int, ...]) -> list[str]:
    q = queries()
    names = []
    with db.connect() as conn:
        conn.execute(eval_queries()["eval_clear"])
        for size in sizes:
            name = f"Synthetic {size // 1000}k"
            names.append(name)
            vendor_id = conn.execute(
                q["upsert_vendor"], {"name": name, "normalized_name": name.lower()}
            ).fetchone()["id"]
            n_entities, edges = synthetic_edges(size, seed=size)
            ids = [int(r["id"]) for r in conn.execute(q["allocate_entity_ids"], {"n": n_entities})]
            with conn.cursor().copy(q["copy_entities"]) as copy:
                copy.set_types(
                    ["int8", "int8", "text", "text", "text", "text[]", "float4", "int4", "text"]
                )
                for i, entity_id in enumerate(ids):
                    copy.write_row(
                        (
                            entity_id,
                            vendor_id,
                            f"Entity {i}",
                            f"entity {i}",
                            ENTITY_TYPES[i % len(ENTITY_TYPES)],
                            [],
                            0.5 + (i % 50) / 100,
                            1 + i % 7,
                            f"Entity {i} appears in a synthetic note.",
                        )
                    )
            with conn.cursor().copy(q["copy_relationships"]) as copy:
                copy.set_types(["int8", "int8", "int8", "text", "float4", "int8", "text", "jsonb"])
                for k, (s, t, rtype) in enumerate(edges):
                    copy.write_row(
                        (
                            vendor_id,
                            ids[s],
                            ids[t],
                            rtype,
                            0.3 + (k % 70) / 100,
                            None,
                            f"Entity {s} {rtype.lower().replace('_', ' ')} Entity {t}.",
                            Jsonb({}),
                        )
                    )
            conn.execute(q["refresh_vendor"], {"vendor_id": vendor_id, "name": name, "aliases": []})
        build = conn.execute(q["start_build"], {"corpus_root": "bench", "models": Jsonb({})})
        conn.execute(
            q["finish_build"],
            {
                "id": build.fetchone()["id"],
                "status": "complete",
                "counts": Jsonb({}),
                "message": "synthetic",
            },
        )
    return names


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(db: Database, pool: Any, vendor: str, repeats: int) -> dict[str, Any]:
    q = queries()
    settings = GraphSettings()
    warm = KnowledgeGraph(pool, settings)
    info = warm.vendor(vendor)
    graph = warm.graph(vendor)

    def floor() -> None:
        with pool.connection() as conn:
            conn.execute(q["kg_relationship_types"], {"vendor_id": info.id}).fetchall()

    def cold(method: str) -> Callable[[], Any]:
        return lambda: getattr(KnowledgeGraph(pool, settings), method)(vendor)

    runs = {
        "floor": timed(floor, repeats),
        "load": timed(cold("graph"), repeats),
        "stats_cold": timed(cold("statistics"), repeats),
        "capped_cold": timed(cold("capped"), repeats),
    }
    warm.statistics(vendor)
    warm.capped(vendor)
    runs["stats_cached"] = timed(lambda: warm.statistics(vendor), repeats * 5)
    runs["capped_cached"] = timed(lambda: warm.capped(vendor), repeats * 5)
    rng = random.Random(7)
    nodes = sorted(graph)
    pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(repeats * 2)] if nodes else []
    it = iter(pairs)
    runs["path"] = (
        timed(lambda: warm.find_path(vendor, *next(it), max_hops=20), len(pairs)) if pairs else []
    )
    row: dict[str, Any] = {
        "vendor": vendor,
        "entities": graph.number_of_nodes(),
        "relationships": graph.number_of_edges(),
    }
    for key, values in runs.items():
        row[key] = {
            "p50": round(percentile(values, 50), 3) if values else None,
            "p95": round(percentile(values, 95), 3) if values else None,
        }
    return row


def growth(rows: list[dict[str, Any]], key: str) -> float | None:
    """Exponent b of time ~ relationships^b between the smallest and largest synthetic vendor."""
    synth = [r for r in rows if r["vendor"].startswith("Synthetic")]
    if len(synth) < 2:
        return None
    a, z = synth[0], synth[-1]
    return round(
        math.log(z[key]["p50"] / a[key]["p50"]) / math.log(z["relationships"] / a["relationships"]),
        2,
    )


def main(argv: list[str] | None = None) -> int:
    parser = measuring_parser(
        "kg",
        __doc__,
        repeats=21,
        what="runs per cold measurement (cached ones run 5x as often)",
        corpus=default_corpus(),
    )
    parser.add_argument("--real", type=int, default=3, help="largest real vendors (default 3)")
    args = parse_measuring(parser, argv)
    console = Console()
    server = server_conninfo(DatabaseSettings())
    bench_db = named_database(server, BENCH_DATABASE)
    console.print("loading synthetic vendors (1k, 10k, 50k relationships) ...")
    synthetic = load_synthetic(bench_db, SIZES)
    targets: list[tuple[Database, list[str]]] = [(bench_db, synthetic)]
    if args.real and args.corpus.is_dir():
        real_db = named_database(server, EVAL_DATABASE)
        console.print(f"bringing {EVAL_DATABASE} up to date with {args.corpus} ...")
        build_vendor_corpus(real_db, args.corpus, quiet=True)
        with real_db.connect() as conn:
            largest = conn.execute(queries()["kg_largest_vendors"], {"limit": args.real})
            targets.append((real_db, [r["name"] for r in largest]))
    rows = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("measuring", total=sum(len(v) for _, v in targets))
        for db, vendors in targets:
            pool = db.pool(min_size=2, max_size=2)
            try:
                for vendor in vendors:
                    rows.append(measure(db, pool, vendor, args.repeats))
                    progress.advance(task)
            finally:
                pool.close()
    table = Table(title="vendor graph latency, ms (p50 / p95)")
    cols = ["floor", "load", "stats_cold", "stats_cached", "capped_cold", "capped_cached", "path"]
    table.add_column("vendor")
    table.add_column("entities", justify="right")
    table.add_column("rels", justify="right")
    for c in cols:
        table.add_column(c.replace("_", " "), justify="right")
    for r in rows:
        table.add_row(
            r["vendor"],
            str(r["entities"]),
            str(r["relationships"]),
            *[
                f"{r[c]['p50']:.2f} / {r[c]['p95']:.2f}" if r[c]["p50"] is not None else "-"
                for c in cols
            ],
        )
    console.print(table)
    ten_k = next((r for r in rows if r["vendor"] == "Synthetic 10k"), None)
    checks = []
    if ten_k is not None:
        for key, limit in TARGETS.items():
            got = ten_k[key]["p50"]
            checks.append(
                {
                    "measure": key,
                    "p50_ms": got,
                    "limit_ms": limit,
                    "ratio": round(got / limit, 3),
                    "met": got <= limit,
                }
            )
            console.print(
                f"10k {key}: p50 {got:.2f} ms vs limit {limit:.0f} ms "
                f"(ratio {got / limit:.2f}) "
                + ("[green]met[/]" if got <= limit else "[red]missed[/]")
            )
    exponents = {c: growth(rows, c) for c in cols}
    console.print(
        "growth exponent b (time ~ relationships^b, 1k -> 50k): "
        + ", ".join(f"{c} {b}" for c, b in exponents.items())
    )
    result = {
        "machine": machine(),
        "repeats": args.repeats,
        "rows": rows,
        "targets_at_10k": checks,
        "growth_exponent": exponents,
    }
    write_results(args.out, result)
    md = [
        f"# Vendor graph benchmark ({time.strftime('%Y-%m-%d')})",
        "",
        "| vendor | entities | rels | " + " | ".join(cols) + " |",
        "|---|---:|---:|" + "---:|" * len(cols),
    ]
    for r in rows:
        md.append(
            f"| {r['vendor']} | {r['entities']} | {r['relationships']} | "
            + " | ".join(
                f"{r[c]['p50']:.2f} / {r[c]['p95']:.2f}" if r[c]["p50"] is not None else "-"
                for c in cols
            )
            + " |"
        )
    md += [
        "",
        "p50 / p95 ms. Targets at 10k: "
        + ", ".join(
            f"{c['measure']} {c['p50_ms']:.2f} ms vs {c['limit_ms']:.0f} ms "
            f"({'met' if c['met'] else 'missed'})"
            for c in checks
        ),
        "",
        "Growth exponents (1k -> 50k): " + ", ".join(f"{c} {b}" for c, b in exponents.items()),
    ]
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n")
    console.print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
