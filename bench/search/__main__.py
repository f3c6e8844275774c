"""``python -m bench.search``: the command line; measures both sizes, the rerank stage and
the ingest, prints each table and verdict, and writes ``bench/results/search.json`` and
``search.md``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import bench.search
from bench import REPO, RESULTS, bench_parser, machine, write_report, write_results
from bench.search.measure import ingest_cost, measure_scale, rerank_cost
from bench.search.scaled import SCALED_DATABASE, build_scaled
from evals.search_quality import chunk_corpus, database_name, load_beir, load_corpus
from search.embedder import Embedder, EmbeddingSettings
from search.settings import SearchSettings
from sql.database import Database, named_database, server_conninfo
from sql.settings import DatabaseSettings

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "scifact"
TARGETS_MS = {"scifact": 10.0, "scaled": 30.0}


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.search", bench.search.__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--split", default="train")
    parser.add_argument("--queries", type=int, default=200, help="measured queries [200]")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--scale", type=int, default=100_000, help="chunks of the large run")
    parser.add_argument(
        "--ingest-documents", type=int, default=1000, help="documents of the ingest run [1000]"
    )
    parser.add_argument("--skip-ingest", action="store_true", help="do not measure the ingest")
    parser.add_argument(
        "--rerank-model",
        type=Path,
        default=None,
        help="local cross-encoder folder for the rerank row (default: KB_RERANK_MODEL, "
        "else a stand-in of ms-marco-MiniLM-L-6-v2's architecture with an untrained head)",
    )
    parser.add_argument(
        "--rerank-queries", type=int, default=50, help="queries of the rerank row [50]"
    )
    parser.add_argument("--skip-rerank", action="store_true", help="do not measure the rerank")
    args = parser.parse_args(argv)
    if (
        args.queries < 1
        or args.warmup < 0
        or args.scale < 1
        or args.ingest_documents < 1
        or args.rerank_queries < 1
    ):
        parser.error("--queries, --scale, --ingest-documents and --rerank-queries must be positive")
    rerank_model = args.rerank_model or SearchSettings().rerank_model_path
    if rerank_model is not None:
        from search.rerank import RerankerUnavailable, check_model_folder

        try:
            rerank_model = check_model_folder(rerank_model)
        except RerankerUnavailable as exc:
            parser.error(str(exc))
    console = Console()

    data = load_beir(args.dataset, args.split)
    server = server_conninfo(DatabaseSettings())
    db: Database = named_database(server, database_name(data.name, "chunked"))
    embedder = Embedder.from_settings(EmbeddingSettings())
    load_corpus(db, data, chunk_corpus(data.corpus, "chunked"), embedder)
    scaled = named_database(server, SCALED_DATABASE)
    console.print(f"bringing {SCALED_DATABASE} to {args.scale:,} chunks ...")
    build_scaled(db, scaled, args.scale, embedder.info.name, embedder.info.dimension, embedder.name)
    settings = SearchSettings()
    texts = [t.strip()[:500] for t in data.queries.values()][: args.warmup + args.queries]

    report: dict[str, Any] = {
        "dataset": data.name,
        "fusion": settings.fusion,
        "candidates": settings.candidates,
        "ef_search": settings.hnsw_ef_search,
        "fulltext_max_df_ratio": settings.fulltext_max_df_ratio,
        "boosts": {k: v for k, v in settings.model_dump().items() if k.endswith("_boost") and v},
        "machine": machine(),
        "scales": {},
    }
    md = [f"# Search latency ({time.strftime('%Y-%m-%d')})", ""]
    for label, target_db in (("scifact", db), ("scaled", scaled)):
        chunks, rows = measure_scale(target_db, embedder, settings, texts, args.warmup, label)
        embed_p50 = rows["query embedding"]["p50_ms"]
        hybrid_p50 = rows["hybrid_search end to end"]["p50_ms"]
        limit = embed_p50 + TARGETS_MS[label]
        report["scales"][label] = {
            "chunks": chunks,
            "latency": rows,
            "target": {
                "hybrid_p50_max_ms": limit,
                "hybrid_p50_ms": hybrid_p50,
                "overhead_ms": hybrid_p50 - embed_p50,
                "overhead_limit_ms": TARGETS_MS[label],
                "met": hybrid_p50 <= limit,
            },
        }
        table = Table(title=f"search latency, {chunks:,} chunks, {args.queries} queries")
        table.add_column("what")
        table.add_column("p50 ms", justify="right")
        table.add_column("p95 ms", justify="right")
        md += [
            f"## {chunks:,} chunks ({label})",
            "",
            "| what | p50 ms | p95 ms |",
            "|---|---:|---:|",
        ]
        for key, r in rows.items():
            table.add_row(key, f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}")
            md.append(f"| {key} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} |")
        console.print(table)
        verdict = (
            f"target hybrid p50 <= embedding p50 + {TARGETS_MS[label]:.0f} ms "
            f"({limit:.1f} ms): {'met' if hybrid_p50 <= limit else 'NOT met'} "
            f"({hybrid_p50:.1f} ms; overhead {hybrid_p50 - embed_p50:.1f} ms, ratio "
            f"{(hybrid_p50 - embed_p50) / TARGETS_MS[label]:.2f})"
        )
        console.print(verdict)
        plain_p50 = rows["hybrid_search end to end, plain path"]["p50_ms"]
        ratio = (
            f"hybrid_search p50 against the plain path (KB_SEARCH_NOTE_WEIGHT=0, "
            f"KB_SEARCH_DISTINCT_NOTES=false) in this run: {hybrid_p50:.1f} / {plain_p50:.1f} ms "
            f"= {hybrid_p50 / plain_p50:.2f} (target <= 1.2: "
            f"{'met' if hybrid_p50 <= 1.2 * plain_p50 else 'NOT met'})"
        )
        report["scales"][label]["against_plain_path"] = hybrid_p50 / plain_p50
        console.print(ratio)
        md += ["", ratio]
        paired = rows["overhead, paired per query"]["p50_ms"]
        note = (
            f"the same overhead as the median of each query's own difference: {paired:.1f} ms "
            f"(ratio {paired / TARGETS_MS[label]:.2f}; the target is judged on the p50s above)"
        )
        console.print(note)
        md += ["", verdict, "", note, ""]

    md += ["## Rerank stage (SciFact scale)", ""]
    if args.skip_rerank:
        report["rerank"] = None
        md += ["not measured in this run (--skip-rerank)", ""]
    else:
        measured = texts[args.warmup :][: args.rerank_queries]
        rerank = rerank_cost(db, embedder, settings, measured, rerank_model)
        report["rerank"] = rerank
        line = (
            f"hybrid_search end to end over {rerank['queries']} queries, p50 / p95: "
            f"{rerank['without_p50_ms']:.1f} / {rerank['without_p95_ms']:.1f} ms without, "
            f"{rerank['with_p50_ms']:.1f} / {rerank['with_p95_ms']:.1f} ms with the top "
            f"{rerank['rerank_depth']} reranked; the stage adds {rerank['added_p50_ms']:.1f} / "
            f"{rerank['added_p95_ms']:.1f} ms (paired). Model: {rerank['model']}."
        )
        console.print(line)
        md += [line, ""]

    if args.skip_ingest:
        report["ingest"] = None
        md += ["## Ingest", "", "not measured in this run (--skip-ingest)", ""]
        write_results(RESULTS / "search.json", report)
        (RESULTS / "search.md").write_text("\n".join(md), encoding="utf-8")
        console.print(f"results: {RESULTS / 'search.json'} (ingest not measured)")
        return 0
    console.print(f"ingest cost on {args.ingest_documents:,} SciFact documents ...")
    ingest = ingest_cost(data, args.ingest_documents, embedder)
    report["ingest"] = ingest
    line = (
        f"ingest {ingest['documents']:,} documents ({ingest['chunks']:,} chunks): "
        f"{ingest['ingest_docs_per_s']:.1f} documents/s; bare SentenceTransformer.encode of "
        f"the same chunks {ingest['bare_encode_docs_per_s']:.1f} documents/s "
        f"(ratio {ingest['ratio']:.2f})"
    )
    console.print(line)
    md += ["## Ingest", "", line, ""]
    console.print(write_report("search", report, md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
