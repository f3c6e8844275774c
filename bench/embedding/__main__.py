"""``python -m bench.embedding``: the command line; loads the data, measures the three
parts in one run, prints each table and verdict, and writes
``bench/results/embedding.json`` and ``embedding.md``."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import bench.embedding
from bench import REPO, bench_parser, machine, write_report
from bench.embedding.engines import BARE, bare_model, bulk_throughput, query_engines, query_latency
from bench.embedding.searches import TXTAI, end_to_end, previous_default
from bench.embedding.txtai_index import INSTALL_HINT, txtai_available, txtai_embeddings
from evals.cli import HarnessError
from evals.search_quality import chunk_corpus, database_name, load_beir, load_corpus
from search.embedder import Embedder
from search.model_files import model_info, quiet_offline_transformers
from search.settings import SearchSettings
from sql.database import named_database, server_conninfo
from sql.settings import DatabaseSettings

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "scifact"
INT8, FP32, TORCH = "onnx int8 (default)", "onnx fp32", "torch fp32"
INT8_OPS = "onnx int8, KB_EMBED_PARALLEL=ops"
#: onnx int8 query p50 / bare p50 at most; bulk int8 / bare at least; hybrid_search
#: p50 (int8) / the previous default's at most.
QUERY_RATIO, BULK_RATIO, PREVIOUS_RATIO = 0.4, 2.0, 0.5


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser("python -m bench.embedding", bench.embedding.__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--split", default="train")
    parser.add_argument("--queries", type=int, default=300, help="measured queries [300]")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up queries [20]")
    parser.add_argument(
        "--bulk-chunks", type=int, default=512, help="first chunks of the bulk run [512]"
    )
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the bulk run [3]")
    parser.add_argument("--skip-txtai", action="store_true", help="leave txtai out")
    args = parser.parse_args(argv)
    if args.queries < 1 or args.warmup < 0 or args.bulk_chunks < 1 or args.repeats < 1:
        parser.error("--queries, --bulk-chunks and --repeats must be positive, --warmup at least 0")
    try:
        args.data = load_beir(args.dataset, args.split)
    except HarnessError as exc:
        parser.error(str(exc))
    return args


def table(title: str, columns: list[str], rows: list[list[str]]) -> tuple[Table, list[str]]:
    """The rich table and its markdown lines."""
    out = Table(title=title)
    md = [f"## {title}", "", "| " + " | ".join(columns) + " |"]
    md.append("|---" + "|---:" * (len(columns) - 1) + "|")
    for n, col in enumerate(columns):
        out.add_column(col, justify="left" if n == 0 else "right")
    for row in rows:
        out.add_row(*row)
        md.append("| " + " | ".join(row) + " |")
    return out, [*md, ""]


def verdict(what: str, value: float, sign: str, limit: float, detail: str) -> dict[str, Any]:
    """``value`` (a ratio) against ``limit``; ``sign`` one of ``<=``, ``<``, ``>=``."""
    met = {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[sign]
    result = "met" if met else "NOT met"
    line = f"target {what} {sign} {limit:g}: {result} (ratio {value:.2f}; {detail})"
    return {"ratio": value, "sign": sign, "limit": limit, "met": met, "line": line}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet_offline_transformers()  # before anything imports huggingface_hub
    console = Console()
    data = args.data
    items = [(q, t.strip()[:500]) for q, t in data.queries.items()][: args.warmup + args.queries]
    if len(items) <= args.warmup:
        raise SystemExit(f"{data.name} {args.split} has {len(items)} queries: fewer than needed")
    info = model_info()
    engines = {
        INT8: Embedder(info, engine="onnx", precision="int8"),
        FP32: Embedder(info, engine="onnx", precision="fp32"),
        TORCH: Embedder(info, engine="torch", precision="fp32"),
    }
    plain = Embedder(info, engine="onnx", precision="int8", parallel="ops")
    for embedder in (*engines.values(), plain):
        embedder.prepare()
    model = bare_model(info)

    chunks = chunk_corpus(data.corpus, "chunked")
    db = named_database(server_conninfo(DatabaseSettings()), database_name(data.name, "chunked"))
    console.print(f"bringing {db.description} to {len(chunks):,} chunks ...")
    load_corpus(db, data, chunks, engines[INT8])
    txtai: tuple[Any, list[Any]] | None = None
    txtai_meta: dict[str, Any] = {}
    if args.skip_txtai:
        txtai_state = "skipped (--skip-txtai)"
    elif not txtai_available():
        txtai_state = f"skipped, it is not installed ({INSTALL_HINT} adds it)"
        console.print(f"txtai {txtai_state}: measuring the rest", style="yellow", markup=False)
    else:
        console.print(f"txtai hybrid index over {len(chunks):,} chunks ...")
        embeddings, txtai_meta = txtai_embeddings(info, chunks)
        txtai = (embeddings, chunks)
        txtai_state = (
            "index built now"
            if txtai_meta["built"] == "now"
            else f"index loaded from {txtai_meta['folder']}"
        )

    measured = len(items) - args.warmup
    query = query_latency(query_engines(model, engines), [t for _, t in items], args.warmup)
    bulk_texts = [c.content for c in chunks[: args.bulk_chunks]]
    tokens = statistics.mean(c.token_count for c in chunks[: args.bulk_chunks])
    bulk = bulk_throughput(
        model,
        {INT8: engines[INT8], INT8_OPS: plain, FP32: engines[FP32]},
        bulk_texts,
        args.repeats,
    )
    search = end_to_end(
        db,
        {INT8: engines[INT8], TORCH: engines[TORCH]},
        SearchSettings(),
        items,
        args.warmup,
        data.qrels,
        txtai,
    )
    previous = previous_default(REPO)

    q_table, q_md = table(
        f"query embedding, one query at a time, {measured} queries",
        ["engine", "p50 ms", "p95 ms", "p50 / bare"],
        [
            [k, f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}", f"{r['ratio_to_bare']:.2f}"]
            for k, r in query.items()
        ],
    )
    b_table, b_md = table(
        f"bulk: the first {len(bulk_texts)} chunks (mean {tokens:.0f} tokens), "
        f"median of {args.repeats}",
        ["engine", "chunks/s", "repeats", "/ bare"],
        [
            [
                k,
                f"{r['chunks_per_s']:.1f}",
                " ".join(f"{v:.1f}" for v in r["repeats"]),
                f"{r['ratio_to_bare']:.2f}",
            ]
            for k, r in bulk.items()
        ],
    )
    rows = [
        [k, f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}", f"{r['ndcg_at_10']:.3f}"]
        for k, r in search.items()
    ]
    if previous:
        rows.append(
            [
                f"previous default (committed {previous['date']})",
                f"{previous['p50_ms']:.1f}",
                f"{previous['p95_ms']:.1f}",
                "",
            ]
        )
    s_table, s_md = table(
        f"search end to end, {len(chunks):,} chunks, {measured} queries",
        ["what", "p50 ms", "p95 ms", "nDCG@10"],
        rows,
    )

    int8_query, int8_search = query[INT8], search[f"hybrid_search, {INT8}"]
    checks = {
        "query_embedding": verdict(
            "onnx int8 query embedding p50 / bare",
            int8_query["ratio_to_bare"],
            "<=",
            QUERY_RATIO,
            f"{int8_query['p50_ms']:.1f} ms against {query[BARE]['p50_ms']:.1f} ms",
        ),
        "bulk": verdict(
            "onnx int8 bulk chunks/s / bare",
            bulk[INT8]["ratio_to_bare"],
            ">=",
            BULK_RATIO,
            f"{bulk[INT8]['chunks_per_s']:.1f} against {bulk[BARE]['chunks_per_s']:.1f}",
        ),
    }
    if previous:
        checks["previous_default"] = verdict(
            "hybrid_search p50 (onnx int8) / previous default",
            int8_search["p50_ms"] / previous["p50_ms"],
            "<=",
            PREVIOUS_RATIO,
            f"{int8_search['p50_ms']:.1f} ms against {previous['p50_ms']:.1f} ms "
            f"committed {previous['date']}",
        )
    if TXTAI in search:
        other = search[TXTAI]
        checks["txtai"] = verdict(
            "hybrid_search p50 (onnx int8) / txtai hybrid p50",
            int8_search["p50_ms"] / other["p50_ms"],
            "<",
            1.0,
            f"{int8_search['p50_ms']:.1f} ms against {other['p50_ms']:.1f} ms; "
            f"nDCG@10 {int8_search['ndcg_at_10']:.3f} against {other['ndcg_at_10']:.3f}",
        )
    notes = [
        f"previous default: bench/results/search.md at {previous['commit']} (the numpy "
        "engine, which is gone: not measured again)"
        if previous
        else f"previous default: git cannot show it in {REPO}"
    ]
    notes.append(f"txtai {txtai_state}")
    if txtai_meta.get("built") == "now":
        notes[-1] += (
            f", built in {txtai_meta['build_s']:.0f} s "
            f"({txtai_meta['build_chunks_per_s']:.1f} chunks/s)"
        )

    md = [f"# Embedding engines ({time.strftime('%Y-%m-%d')})", ""]
    for rich_table, lines in ((q_table, q_md), (b_table, b_md), (s_table, s_md)):
        console.print(rich_table)
        md += lines
    for line in [c["line"] for c in checks.values()] + notes:
        console.print(line, markup=False)
        md += [line, ""]
    report = {
        "dataset": data.name,
        "split": args.split,
        "model": info.name,
        "machine": machine(),
        "queries": measured,
        "warmup": args.warmup,
        "query_embedding": query,
        "bulk": {"chunks": len(bulk_texts), "mean_tokens": tokens, "engines": bulk},
        "search": {"chunks": len(chunks), "measures": search, "previous_default": previous},
        "txtai": {"state": txtai_state, **txtai_meta},
        "targets": {k: {n: v for n, v in c.items() if n != "line"} for k, c in checks.items()},
    }
    console.print(write_report("embedding", report, md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
