"""Search latency benchmark: ``python -m bench.search [--dataset DIR] [--queries N]``.

In one run, on the SciFact evaluation database (``kb_eval_scifact_chunked``,
built by ``python -m search.eval``, or here if missing), single queries after a
warm-up, p50 / p95 of:

1. the bare query embedding (``Embedder.encode([query])``);
2. a bare ``ORDER BY embedding <=> q LIMIT 10``;
3. a bare full-text query (any word, ``ts_rank``, LIMIT 10);
4. the hybrid statement alone (both arms + RRF, one round trip);
5. ``hybrid_search`` end to end (validation, embedding, SQL, collapse, paging).

Target: hybrid_search p50 <= query embedding p50 + 10 ms. Results go to
``bench/results/search.json``.
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
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from search.embedder import Embedder, EmbeddingSettings
from search.eval import (
    chunk_corpus,
    database_name,
    load_beir,
    load_corpus,
)
from search.hybrid import fetch_candidates, hybrid_search
from search.metrics import percentile
from search.query import SearchFilters
from search.settings import SearchSettings
from sql.database import Database, named_database, server_conninfo
from sql.queries import queries
from sql.settings import DatabaseSettings

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "scifact"
RESULTS = REPO / "bench" / "results"
TARGET_OVERHEAD_MS = 10.0


def measure_one(
    conn: psycopg.Connection[Any],
    embedder: Embedder,
    settings: SearchSettings,
    text: str,
    vector: NDArray[np.float32],
) -> dict[str, float]:
    """Milliseconds of each measured operation for one query."""
    q = queries()
    out: dict[str, float] = {}
    start = time.perf_counter()
    embedder.encode([text])
    out["query embedding"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    conn.execute(q["bench_vector_top10"], {"embedding": vector}).fetchall()
    out["bare vector top 10"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    conn.execute(q["bench_fulltext_top10"], {"query": text}).fetchall()
    out["bare full-text top 10"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    fetch_candidates(
        conn,
        text,
        vector,
        SearchFilters(),
        candidates=settings.candidates,
        rrf_k=settings.rrf_k,
        ef_search=settings.hnsw_ef_search,
        max_df_ratio=settings.fulltext_max_df_ratio,
    )
    out["hybrid statement"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    hybrid_search(text[:500], db=conn, embedder=embedder, top_k=10, settings=settings)
    out["hybrid_search end to end"] = (time.perf_counter() - start) * 1000
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--split", default="train")
    parser.add_argument("--queries", type=int, default=200, help="measured queries")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args(argv)
    console = Console()

    data = load_beir(args.dataset, args.split)
    db: Database = named_database(
        server_conninfo(DatabaseSettings()), database_name(data.name, "chunked")
    )
    embedder = Embedder.from_settings(EmbeddingSettings())
    load_corpus(db, data, chunk_corpus(data.corpus, "chunked"), embedder)
    settings = SearchSettings()
    texts = [t.strip() for t in data.queries.values()][: args.warmup + args.queries]
    q = queries()
    samples: dict[str, list[float]] = {
        "query embedding": [],
        "bare vector top 10": [],
        "bare full-text top 10": [],
        "hybrid statement": [],
        "hybrid_search end to end": [],
    }
    with db.connect(autocommit=True) as conn:
        chunks = conn.execute(q["search_corpus_size"]).fetchone()
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("queries", total=len(texts))
            for n, text in enumerate(texts):
                vector = embedder.encode([text])[0]
                measured = measure_one(conn, embedder, settings, text, vector)
                if n >= args.warmup:
                    for key, ms in measured.items():
                        samples[key].append(ms)
                progress.advance(task)

    rows = {
        key: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95), "n": len(v)}
        for key, v in samples.items()
    }
    embed_p50 = rows["query embedding"]["p50_ms"]
    hybrid_p50 = rows["hybrid_search end to end"]["p50_ms"]
    report: dict[str, Any] = {
        "dataset": data.name,
        "chunks": chunks["chunks"] if chunks else None,
        "candidates": settings.candidates,
        "ef_search": settings.hnsw_ef_search,
        "fulltext_max_df_ratio": settings.fulltext_max_df_ratio,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "latency": rows,
        "target": {
            "hybrid_p50_max_ms": embed_p50 + TARGET_OVERHEAD_MS,
            "hybrid_p50_ms": hybrid_p50,
            "met": hybrid_p50 <= embed_p50 + TARGET_OVERHEAD_MS,
        },
    }
    table = Table(title=f"search latency, {report['chunks']} chunks, {args.queries} queries")
    table.add_column("what")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    for key, r in rows.items():
        table.add_row(key, f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}")
    console.print(table)
    console.print(
        f"target hybrid p50 <= embedding p50 + {TARGET_OVERHEAD_MS:.0f} ms "
        f"({embed_p50 + TARGET_OVERHEAD_MS:.1f} ms): "
        f"{'met' if report['target']['met'] else 'NOT met'} ({hybrid_p50:.1f} ms)"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "search.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
