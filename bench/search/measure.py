"""What is timed: each measure of one query, every measure over a corpus after a warm-up
pass, the rerank stage in pairs, and the one-off ingest cost."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql as pgsql
from rich.progress import Progress

from bench import bench_queries
from evals.search_quality import chunk_corpus, load_corpus
from search.embedder import Embedder
from search.hybrid import fetch_candidates, hybrid_search, search_connect
from search.metrics import percentile
from search.query import SearchFilters
from search.settings import SearchSettings
from sql.database import Database, named_database, server_conninfo
from sql.queries import queries
from sql.settings import DatabaseSettings

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MEASURES = (
    "query embedding",
    "bare vector top 10",
    "bare full-text top 10",
    "hybrid statement",
    "hybrid_search end to end",
    "hybrid_search end to end, plain path",
)
#: The plain path: the vector arm on chunk vectors alone (no note card vectors) and
#: only overlapping neighbours collapsed, as search ran before note cards.
PLAIN = {"note_weight": 0.0, "distinct_notes": False}
INGEST_DATABASE = "kb_bench_search_ingest"


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
    if kind == "hybrid_search end to end, plain path":
        settings = settings.model_copy(update=PLAIN)
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
    ``bench.rerank_stand_in.build_stand_in`` (ms-marco-MiniLM-L-6-v2's architecture with
    an untrained head: the latency is real, its order is not)."""
    import tempfile

    from bench.rerank_stand_in import build_stand_in
    from search.rerank import CrossEncoderReranker

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
