"""Search latency benchmark: ``python -m bench.search [--scale N] [--queries N]``.

In one run, at two sizes, single queries after a warm-up, p50 / p95 of:

1. the bare query embedding (``Embedder.encode([query])``);
2. a bare ``ORDER BY embedding <=> q LIMIT 10``;
3. a bare full-text query (any word, ``ts_rank``, LIMIT 10);
4. the hybrid statement alone (both arms + fusion, one round trip);
5. ``hybrid_search`` end to end (validation, embedding, SQL, boosts, collapse, paging).

The floors (2, 3) run on a plain connection with the server's defaults; the
hybrid measures (4, 5) on a connection from ``search.hybrid.search_connect``, as
a service or notebook that searches repeatedly would use (``search_pool``): it
starts with the search's settings, so a search is its statement alone.

A pass of ``hybrid_search`` over every query warms the caches first; then the
operations of each query run back to back, in an order that rotates from query to
query, so that the machine's slow spells fall on all of them alike.

Sizes: SciFact (``kb_eval_scifact_chunked``, 5,183 abstracts in 10,297 chunks,
built by ``python -m evals search`` or here if missing) and ``--scale`` chunks
(default 100,000) in ``kb_bench_search_scaled``: the SciFact chunks *replicated*,
each copy a new document with the same text and its embedding moved by Gaussian
noise (sigma 0.025 per dimension, then re-normalised: cosine about 0.8 to the
original) so the HNSW graph holds no exact duplicates. The full-text arm sees
every word ten times as often, as a ten times larger corpus of the same kind
would. Built once, reused while its fingerprint holds.

The rerank row (SciFact scale, ``--rerank-queries``, default 50): ``hybrid_search``
end to end with and without the top 50 reranked by a local cross-encoder
(``--rerank-model`` or ``KB_RERANK_MODEL``; otherwise a stand-in of
ms-marco-MiniLM-L-6-v2's architecture built from the packaged MiniLM-L6 encoder with
an untrained head: its latency is a real cross-encoder's, its order is noise).

Targets: hybrid_search p50 <= query embedding p50 + 10 ms at SciFact scale and
+ 30 ms at 100k chunks (judged on the two p50s; the median of each query's own
end-to-end minus embedding time is printed next to it). Also measured: the
one-off ingest cost (documents per second) of embedding SciFact through
``Embedder.encode`` next to a bare ``SentenceTransformer.encode`` of the same
texts. Results:
``bench/results/search.json`` and ``search.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql as pgsql
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench import bench_queries
from evals import eval_queries
from evals.search_quality import chunk_corpus, database_name, load_beir, load_corpus
from search.embedder import Embedder, EmbeddingSettings
from search.hybrid import fetch_candidates, hybrid_search, search_connect
from search.metrics import percentile
from search.query import SearchFilters
from search.settings import SearchSettings
from sql.database import Database, named_database, server_conninfo
from sql.queries import COPY_CHUNKS_TYPES, queries
from sql.settings import DatabaseSettings

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "scifact"
RESULTS = REPO / "bench" / "results"
TARGET_OVERHEAD_MS = 10.0


def measure_one(
    kind: str,
    conn: psycopg.Connection[Any],
    search_conn: psycopg.Connection[Any],
    embedder: Embedder,
    settings: SearchSettings,
    text: str,
    vector: NDArray[np.float32],
) -> float:
    """Milliseconds of one measured operation (``kind``, one of MEASURES) for one query."""
    q = bench_queries()
    start = time.perf_counter()
    if kind == "query embedding":
        embedder.encode([text])
    elif kind == "bare vector top 10":
        conn.execute(q["bench_vector_top10"], {"embedding": vector}).fetchall()
    elif kind == "bare full-text top 10":
        conn.execute(q["bench_fulltext_top10"], {"query": text}).fetchall()
    elif kind == "hybrid statement":
        fetch_candidates(
            search_conn,
            text,
            vector,
            SearchFilters(),
            candidates=settings.candidates,
            **settings.statement_args(),
        )
    else:
        hybrid_search(text, db=search_conn, embedder=embedder, top_k=10, settings=settings)
    return (time.perf_counter() - start) * 1000


SCALED_DATABASE = "kb_bench_search_scaled"
INGEST_DATABASE = "kb_bench_search_ingest"
NOISE_SIGMA = 0.025
SEED = 7


def build_scaled(
    source: Database, target: Database, chunks_wanted: int, model: str, dimension: int
) -> int:
    """Fill ``target`` with ``chunks_wanted`` chunks: whole copies of the source's
    documents (then part of one more), embeddings moved by noise. Returns the chunk
    count; a target already built alike is reused."""
    import numpy as np
    from psycopg.types.json import Jsonb

    from sql.database import bind_embedding_model

    q = {**queries(), **eval_queries(), **bench_queries()}
    with source.connect() as conn:
        docs = conn.execute(q["bench_source_documents"]).fetchall()
        chunks = conn.execute(q["bench_source_chunks"]).fetchall()
    fingerprint = {
        "source_chunks": len(chunks),
        "source_documents": len(docs),
        "chunks": chunks_wanted,
        "sigma": NOISE_SIGMA,
        "seed": SEED,
        "model": model,
    }
    by_doc: dict[int, list[Any]] = {}
    for c in chunks:
        by_doc.setdefault(c["document_id"], []).append(c)
    rng = np.random.default_rng(SEED)
    with target.connect() as conn:
        bind_embedding_model(conn, model, dimension)
        current = conn.execute(q["get_meta"], {"key": "bench_scaled"}).fetchone()
        if current is not None and current["value"] == fingerprint:
            return chunks_wanted
        conn.execute(q["eval_clear"])
        conn.execute(q["bench_drop_hnsw_index"])
        conn.execute(q["eval_insert_vendor"], {"name": "scaled", "normalized_name": "scaled"})
        written, copy_no, next_doc = 0, 0, 1
        with Progress(transient=True) as progress:
            task = progress.add_task(f"writing {chunks_wanted:,} chunks", total=chunks_wanted)
            while written < chunks_wanted:
                doc_rows: list[tuple[Any, ...]] = []
                chunk_rows: list[tuple[Any, ...]] = []
                for d in docs:
                    if written + len(chunk_rows) >= chunks_wanted:
                        break
                    suffix = f"#copy{copy_no}" if copy_no else ""
                    doc_rows.append(
                        (
                            next_doc,
                            d["source_path"] + suffix,
                            1,
                            d["category"],
                            d["title"],
                            Jsonb(d["metadata"]),
                            d["content_hash"],
                        )
                    )
                    for c in by_doc.get(d["id"], []):
                        stored = c["embedding"]  # a pgvector Vector (or an array)
                        vector: Any = np.asarray(
                            stored.to_numpy() if hasattr(stored, "to_numpy") else stored,
                            dtype=np.float32,
                        )
                        if copy_no:
                            moved = vector + rng.normal(0.0, NOISE_SIGMA, vector.shape)
                            vector = (moved / np.linalg.norm(moved)).astype(np.float32)
                        chunk_rows.append(
                            (
                                next_doc,
                                c["chunk_index"],
                                c["total_chunks"],
                                c["context_header"],
                                c["content"],
                                c["content_hash"],
                                c["token_count"],
                                0,
                                c["content_hash"],
                                vector,
                                Jsonb({}),
                            )
                        )
                    next_doc += 1
                with conn.cursor().copy(q["eval_copy_documents"]) as copy:
                    copy.set_types(["int8", "text", "int8", "text", "text", "jsonb", "text"])
                    for row in doc_rows:
                        copy.write_row(row)
                with conn.cursor().copy(q["copy_chunks"]) as copy:
                    copy.set_types(list(COPY_CHUNKS_TYPES))
                    for chunk_row in chunk_rows:
                        copy.write_row(chunk_row)
                written += len(chunk_rows)
                copy_no += 1
                progress.update(task, completed=written)
        conn.execute(q["eval_fix_sequences"])
        console = Console(stderr=True)
        console.print(f"building the HNSW index over {written:,} chunks ...")
        conn.execute(q["bench_index_memory"])
        conn.execute(q["create_hnsw_index"])
        conn.execute(q["set_meta"], {"key": "bench_scaled", "value": Jsonb(fingerprint)})
        conn.commit()
        conn.autocommit = True
        conn.execute(q["eval_analyze"])
    return written


def measure_scale(
    db: Database,
    embedder: Embedder,
    settings: SearchSettings,
    texts: list[str],
    warmup: int,
    label: str,
) -> tuple[int, dict[str, dict[str, float]]]:
    """Every measure for every query, after a pass of ``hybrid_search`` over all of
    them has warmed the caches (so no measure runs on a cache another one just
    filled for it)."""
    samples: dict[str, list[float]] = {k: [] for k in MEASURES}
    vectors = [embedder.encode([t])[0] for t in texts]
    with db.connect(autocommit=True) as conn, search_connect(db, settings) as search_conn:
        row = conn.execute(queries()["search_corpus_size"]).fetchone()
        with Progress(transient=True) as progress:
            task = progress.add_task(f"queries, {label}", total=len(texts) * (len(MEASURES) + 1))
            for text in texts:  # warm-up pass
                hybrid_search(text, db=search_conn, embedder=embedder, top_k=10, settings=settings)
                progress.advance(task)
            # interleaved, so that the machine's slow spells fall on every measure
            # alike; the order rotates from query to query, so none always runs first
            for n, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
                for i in range(len(MEASURES)):
                    kind = MEASURES[(n + i) % len(MEASURES)]
                    ms = measure_one(kind, conn, search_conn, embedder, settings, text, vector)
                    if n >= warmup:
                        samples[kind].append(ms)
                    progress.advance(task)
    rows = {
        key: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95), "n": len(v)}
        for key, v in samples.items()
    }
    # each query's measures ran back to back: its end-to-end search minus its own
    # embedding is one overhead sample, free of the spread between queries
    paired = [
        e2e - embed
        for e2e, embed in zip(
            samples["hybrid_search end to end"], samples["query embedding"], strict=True
        )
    ]
    rows["overhead, paired per query"] = {
        "p50_ms": percentile(paired, 50),
        "p95_ms": percentile(paired, 95),
        "n": len(paired),
    }
    return (int(row["chunks"]) if row else 0), rows


def ingest_cost(data: Any, documents: int, embedder: Embedder) -> dict[str, Any]:
    """Load ``documents`` SciFact documents into a fresh database (nothing cached) and
    embed the same chunk texts with a bare ``SentenceTransformer.encode``."""
    from evals.search_quality import BeirDataset

    ids = list(data.corpus)[:documents]
    subset = BeirDataset(data.name, {i: data.corpus[i] for i in ids}, {}, {})
    server = server_conninfo(DatabaseSettings())
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL(bench_queries()["drop_database"]).format(
                name=pgsql.Identifier(INGEST_DATABASE)
            )
        )
    db = named_database(server, INGEST_DATABASE)
    start = time.perf_counter()
    chunks = chunk_corpus(subset.corpus, "chunked")
    load_corpus(db, subset, chunks, embedder)
    ingest_s = time.perf_counter() - start
    texts = [c.content for c in chunks]
    model = embedder.sentence_transformer()
    start = time.perf_counter()
    model.encode(texts, batch_size=embedder.batch_size)
    bare_s = time.perf_counter() - start
    return {
        "documents": len(ids),
        "chunks": len(chunks),
        "ingest_s": ingest_s,
        "ingest_docs_per_s": len(ids) / ingest_s,
        "bare_encode_s": bare_s,
        "bare_encode_docs_per_s": len(ids) / bare_s,
        "ratio": ingest_s / bare_s,
    }


def rerank_cost(
    db: Database,
    embedder: Embedder,
    settings: SearchSettings,
    texts: list[str],
    model: Path | None,
) -> dict[str, Any]:
    """``hybrid_search`` end to end with and without the rerank stage, in pairs.

    ``model``: a local cross-encoder folder; None builds the stand-in of
    ``search.rerank.build_stand_in`` (ms-marco-MiniLM-L-6-v2's architecture with
    an untrained head: the latency is real, its order is not)."""
    import tempfile

    from search.rerank import CrossEncoderReranker, build_stand_in

    with tempfile.TemporaryDirectory() as tmp:
        path = model or build_stand_in(Path(tmp) / "minilm-cross-encoder")
        reranker = CrossEncoderReranker(path)
        samples: dict[str, list[float]] = {"without": [], "with": []}
        with search_connect(db, settings) as conn, Progress(transient=True) as progress:
            task = progress.add_task("queries, rerank", total=len(texts))

            def one(text: str, kind: str) -> float:
                start = time.perf_counter()
                hybrid_search(
                    text,
                    db=conn,
                    embedder=embedder,
                    top_k=10,
                    settings=settings,
                    reranker=reranker if kind == "with" else None,
                )
                return (time.perf_counter() - start) * 1000

            one(texts[0], "with")  # warm-up: the model's first call
            for n, text in enumerate(texts):
                for kind in ("with", "without") if n % 2 else ("without", "with"):
                    samples[kind].append(one(text, kind))
                progress.advance(task)
    added = [w - wo for w, wo in zip(samples["with"], samples["without"], strict=True)]
    return {
        "model": str(model) if model else "stand-in: packaged MiniLM-L6 + untrained head",
        "queries": len(texts),
        "rerank_depth": settings.rerank_depth,
        "without_p50_ms": percentile(samples["without"], 50),
        "without_p95_ms": percentile(samples["without"], 95),
        "with_p50_ms": percentile(samples["with"], 50),
        "with_p95_ms": percentile(samples["with"], 95),
        "added_p50_ms": percentile(added, 50),
        "added_p95_ms": percentile(added, 95),
    }


MEASURES = (
    "query embedding",
    "bare vector top 10",
    "bare full-text top 10",
    "hybrid statement",
    "hybrid_search end to end",
)
TARGETS_MS = {"scifact": 10.0, "scaled": 30.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.search",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    build_scaled(db, scaled, args.scale, embedder.info.name, embedder.info.dimension)
    settings = SearchSettings()
    texts = [t.strip()[:500] for t in data.queries.values()][: args.warmup + args.queries]

    report: dict[str, Any] = {
        "dataset": data.name,
        "fusion": settings.fusion,
        "candidates": settings.candidates,
        "ef_search": settings.hnsw_ef_search,
        "fulltext_max_df_ratio": settings.fulltext_max_df_ratio,
        "boosts": {k: v for k, v in settings.model_dump().items() if k.endswith("_boost") and v},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
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
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "search.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
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
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "search.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "search.md").write_text("\n".join(md), encoding="utf-8")
    console.print(f"results: {RESULTS / 'search.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
