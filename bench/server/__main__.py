"""``python -m bench.server``: the command line; builds what both parts measure, runs
them, and hands the figures to :func:`bench.server.report.report`."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

import bench.server
from bench import measuring_parser, parse_measuring
from bench.server import QUERIES
from bench.server.budgets import token_budgets
from bench.server.latency import bare_calls, cold_graph, latency, vendor_graph
from bench.server.report import report
from evals.corpus import EVAL_DATABASE, build_vendor_corpus, default_corpus
from extraction.settings import BUNDLED_SAMPLE
from kg.store import KnowledgeGraph
from search.embedder import Embedder
from search.hybrid import hybrid_search, search_pool
from server.auth import KeyStore
from sql.database import named_database, server_conninfo
from sql.queries import queries
from sql.settings import DatabaseSettings

#: The bundled sample's knowledge base, which the token budgets are measured on.
SAMPLE_DATABASE = "kb_bench_sample"


def main(argv: list[str] | None = None) -> int:
    parser = measuring_parser(
        "server",
        bench.server.__doc__,
        repeats=21,
        what="calls per measurement",
        corpus=default_corpus(),
    )
    args = parse_measuring(parser, argv)
    console = Console()
    work = Path(tempfile.mkdtemp(prefix="kb-bench-server-"))
    run = f"bench-server-{secrets.token_hex(4)}"  # key names, unique to this run
    embedder = Embedder.from_settings()

    console.print(f"token budgets on the bundled sample, in {SAMPLE_DATABASE} ...")
    sample = named_database(server_conninfo(DatabaseSettings()), SAMPLE_DATABASE)
    build_vendor_corpus(sample, BUNDLED_SAMPLE, quiet=True)
    budgets = token_budgets(sample, embedder, KeyStore(sample).create(run))

    console.print(f"bringing {EVAL_DATABASE} up to date with {args.corpus} ...")
    corpus_db = named_database(server_conninfo(DatabaseSettings()), EVAL_DATABASE)
    build_vendor_corpus(corpus_db, args.corpus, quiet=True)
    with corpus_db.connect() as conn:
        rows = conn.execute(queries()["kg_largest_vendors"], {"limit": 3}).fetchall()
    vendors = [r["name"] for r in rows]
    largest = vendors[0]
    console.print(f"latency on {EVAL_DATABASE}; largest vendor {largest!r} ...")
    bare = bare_calls(corpus_db, embedder, largest, args.repeats)
    key = KeyStore(corpus_db).create(run)
    env = {
        **os.environ,
        "DATABASE_URL": corpus_db.conninfo,
        "KB_API_KEYS_FILE": str(work / "keys.json"),
        "BMCIS_API_KEY": key,
        "BMCIS_RATE_LIMIT_MINUTE": "100000",
        "BMCIS_RATE_LIMIT_HOUR": "1000000",
        "BMCIS_RATE_LIMIT_DAY": "10000000",
    }
    # the other tools, on the largest vendor's most central entities and a real chunk
    kg = KnowledgeGraph(corpus_db)
    top = kg.statistics(largest).top_entities
    chunk_id = hybrid_search(QUERIES[0], db=corpus_db, embedder=embedder, top_k=1).hits[0].chunk_id
    extra: list[tuple[str, str, dict[str, Any]]] = [
        ("get_chunk full", "get_chunk", {"chunk_id": chunk_id}),
        ("list_vendors page_size=20", "list_vendors", {"page_size": 20}),
        (
            "find_entity_path",
            "find_entity_path",
            {"vendor_name": largest, "from_entity": str(top[0].id), "to_entity": str(top[-1].id)},
        ),
        (
            "get_entity_neighbors depth 2",
            "get_entity_neighbors",
            {"vendor_name": largest, "entity": str(top[0].id), "depth": 2},
        ),
        ("get_server_metrics", "get_server_metrics", {}),
    ]
    pool = corpus_db.pool(min_size=1, max_size=2)
    searches = search_pool(corpus_db, max_size=2)

    def bare_search(call_args: dict[str, Any]) -> None:
        hybrid_search(call_args["query"], db=searches, embedder=embedder, top_k=10)

    cold = cold_graph(pool)

    def bare_vendor(call_args: dict[str, Any]) -> None:
        vendor_graph(cold, call_args["vendor_name"])

    try:
        measured = latency(
            env,
            key,
            largest,
            vendors,
            args.repeats,
            extra,
            {"semantic_search metadata": bare_search, "find_vendor_info full": bare_vendor},
        )
    finally:
        searches.close()
        pool.close()
    paired = measured.pop("paired")

    report(console, args.out, args.repeats, largest, budgets, measured, bare, paired)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
