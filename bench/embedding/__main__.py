"""``python -m bench.embedding``: the command line; loads the data, measures the three
parts in one run, prints each table and verdict, and writes
``bench/results/embedding.json`` and ``embedding.md``."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

import bench.embedding
from bench import REPO, bench_parser, machine, write_report
from bench.embedding.alone import BARE, ENGINES, INT8, TXTAI
from bench.embedding.searches import previous_default
from bench.embedding.txtai_index import INSTALL_HINT, txtai_available
from evals.cli import HarnessError
from evals.search_quality import chunk_corpus, database_name, load_beir, load_corpus
from search.embedder import Embedder
from search.metrics import percentile
from search.model_files import model_info, quiet_offline_transformers
from sql.database import named_database, server_conninfo
from sql.settings import DatabaseSettings

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "scifact"
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
    parser.add_argument(
        "--rounds",
        "--repeats",
        dest="repeats",
        type=int,
        default=3,
        help="rounds: each engine measured once a round, alone in a new process, the "
        "engines' order rotating from round to round; medians over the rounds [3]",
    )
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


def alone(args: argparse.Namespace, part: str, engine: str, database: str) -> dict[str, Any]:
    """One engine measured in a process of its own (:mod:`bench.embedding.alone`)."""
    command = [
        sys.executable,
        "-m",
        "bench.embedding.alone",
        part,
        engine,
        "--dataset",
        str(args.dataset),
        "--split",
        args.split,
        "--queries",
        str(args.queries),
        "--warmup",
        str(args.warmup),
        "--bulk-chunks",
        str(args.bulk_chunks),
        "--database",
        database,
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"{part} / {engine} failed:\n{tail}")
    result: dict[str, Any] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result


def rounds(
    args: argparse.Namespace, part: str, engines: list[str], database: str, console: Console
) -> dict[str, list[dict[str, Any]]]:
    """Every engine's results, one a round; each round runs every engine alone, in
    an order rotated by one from the round before."""
    out: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
    for r in range(args.repeats):
        for i in range(len(engines)):
            engine = engines[(r + i) % len(engines)]
            console.print(f"  {part}, round {r + 1}/{args.repeats}: {engine}", markup=False)
            out[engine].append(alone(args, part, engine, database))
    return out


def latencies(runs: dict[str, list[dict[str, Any]]], floor: str | None) -> dict[str, Any]:
    """Per engine: the median over rounds of each round's p50 and p95 (ms)."""
    out: dict[str, Any] = {}
    for engine, results in runs.items():
        p50s = [percentile(r["ms"], 50) for r in results]
        p95s = [percentile(r["ms"], 95) for r in results]
        out[engine] = {
            "p50_ms": statistics.median(p50s),
            "p95_ms": statistics.median(p95s),
            "round_p50s": p50s,
            "n": sum(len(r["ms"]) for r in results),
        }
        if "ndcg_at_10" in results[0]:
            out[engine]["ndcg_at_10"] = results[0]["ndcg_at_10"]
    if floor is not None:
        for row in out.values():
            row["ratio_to_bare"] = row["p50_ms"] / out[floor]["p50_ms"]
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet_offline_transformers()  # before anything imports huggingface_hub
    console = Console()
    data = args.data
    items = [(q, t.strip()[:500]) for q, t in data.queries.items()][: args.warmup + args.queries]
    if len(items) <= args.warmup:
        raise SystemExit(f"{data.name} {args.split} has {len(items)} queries: fewer than needed")
    info = model_info()
    chunks = chunk_corpus(data.corpus, "chunked")
    name = database_name(data.name, "chunked")
    db = named_database(server_conninfo(DatabaseSettings()), name)
    console.print(f"bringing {db.description} to {len(chunks):,} chunks ...")
    load_corpus(db, data, chunks, Embedder(info, engine="onnx", precision="int8"))
    searches = list(ENGINES["search"])
    if args.skip_txtai:
        txtai_state = "skipped (--skip-txtai)"
        searches.remove(TXTAI)
    elif not txtai_available():
        txtai_state = f"skipped, it is not installed ({INSTALL_HINT} adds it)"
        console.print(f"txtai {txtai_state}: measuring the rest", style="yellow", markup=False)
        searches.remove(TXTAI)
    else:
        txtai_state = "measured"

    measured = len(items) - args.warmup
    console.print("each engine alone in its own process, taking turns:")
    query = latencies(rounds(args, "query", list(ENGINES["query"]), name, console), BARE)
    bulk_runs = rounds(args, "bulk", list(ENGINES["bulk"]), name, console)
    floor_rate = statistics.median(r["chunks_per_s"] for r in bulk_runs[BARE])
    bulk = {
        engine: {
            "chunks_per_s": statistics.median(r["chunks_per_s"] for r in results),
            "repeats": [r["chunks_per_s"] for r in results],
            "ratio_to_bare": statistics.median(r["chunks_per_s"] for r in results) / floor_rate,
        }
        for engine, results in bulk_runs.items()
    }
    bulk_texts = [c.content for c in chunks[: args.bulk_chunks]]
    tokens = statistics.mean(c.token_count for c in chunks[: args.bulk_chunks])
    search = latencies(rounds(args, "search", searches, name, console), None)
    previous = previous_default(REPO)

    q_table, q_md = table(
        f"query embedding, one query at a time, {measured} queries, median of "
        f"{args.repeats} rounds",
        ["engine", "p50 ms", "p95 ms", "p50 / bare", "round p50s"],
        [
            [
                k,
                f"{r['p50_ms']:.1f}",
                f"{r['p95_ms']:.1f}",
                f"{r['ratio_to_bare']:.2f}",
                " ".join(f"{v:.1f}" for v in r["round_p50s"]),
            ]
            for k, r in query.items()
        ],
    )
    b_table, b_md = table(
        f"bulk: the first {len(bulk_texts)} chunks (mean {tokens:.0f} tokens), "
        f"median of {args.repeats} rounds",
        ["engine", "chunks/s", "rounds", "/ bare"],
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
        [
            k,
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
            f"{r['ndcg_at_10']:.3f}",
            " ".join(f"{v:.1f}" for v in r["round_p50s"]),
        ]
        for k, r in search.items()
    ]
    if previous:
        rows.append(
            [
                f"previous default (committed {previous['date']})",
                f"{previous['p50_ms']:.1f}",
                f"{previous['p95_ms']:.1f}",
                "",
                "",
            ]
        )
    s_table, s_md = table(
        f"search end to end, {len(chunks):,} chunks, {measured} queries, median of "
        f"{args.repeats} rounds",
        ["what", "p50 ms", "p95 ms", "nDCG@10", "round p50s"],
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
        "every engine and floor timed alone in a process of its own, the engines taking "
        "turns from round to round (bench/embedding/alone.py)",
        f"previous default: bench/results/search.md at {previous['commit']} (the numpy "
        "engine, which is gone: not measured again)"
        if previous
        else f"previous default: git cannot show it in {REPO}",
        f"txtai {txtai_state}",
    ]

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
        "rounds": args.repeats,
        "query_embedding": query,
        "bulk": {"chunks": len(bulk_texts), "mean_tokens": tokens, "engines": bulk},
        "search": {"chunks": len(chunks), "measures": search, "previous_default": previous},
        "txtai": {"state": txtai_state},
        "targets": {k: {n: v for n, v in c.items() if n != "line"} for k, c in checks.items()},
    }
    console.print(write_report("embedding", report, md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
