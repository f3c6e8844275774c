"""One engine (or floor) measured alone, in a process of its own:
``python -m bench.embedding.alone PART ENGINE [options]`` prints one JSON object
(its samples) on stdout and nothing else there.

Why a process each: an engine timed in a process that already holds another
engine's sessions or torch's thread pools shares the cores with them. Measured
side by side in one process, a bare ``SentenceTransformer.encode`` of one query
took 21.2 ms here; alone in its own process, 6.8 ms (2026-11-26). The harness
(:mod:`bench.embedding.__main__`) runs each engine of a part this way, the
engines taking turns from round to round.

PART is ``query`` (one query at a time), ``bulk`` (chunks per second over one
call) or ``search`` (a whole search: ``hybrid_search`` with an engine, or
txtai's hybrid ``search(q, 10)``, with nDCG@10 of what it returned).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import orjson

#: The engines a part measures: the floors first.
BARE = "bare SentenceTransformer.encode"
INT8, FP32, TORCH = "onnx int8 (default)", "onnx fp32", "torch fp32"
INT8_OPS = "onnx int8, KB_EMBED_PARALLEL=ops"
TXTAI = "txtai hybrid, search(q, 10)"
ENGINES = {
    "query": (BARE, INT8, FP32, TORCH),
    "bulk": (BARE, INT8, INT8_OPS, FP32),
    "search": (TXTAI, f"hybrid_search, {INT8}", f"hybrid_search, {TORCH}"),
}
BULK_BATCH = 64


def _embed(engine: str) -> Any:
    """``embed(texts)`` of one engine, loaded and warmed in this process."""
    from search.embedder import Embedder
    from search.model_files import model_info, quiet_offline_transformers

    info = model_info()
    if engine == BARE:
        quiet_offline_transformers()
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(info.path), device="cpu", local_files_only=True)
        model.max_seq_length = info.max_seq_length
        return lambda texts: model.encode(texts, batch_size=BULK_BATCH, show_progress_bar=False)
    settings = {
        INT8: {"engine": "onnx", "precision": "int8"},
        INT8_OPS: {"engine": "onnx", "precision": "int8", "parallel": "ops"},
        FP32: {"engine": "onnx", "precision": "fp32"},
        TORCH: {"engine": "torch", "precision": "fp32"},
    }[engine]
    embedder = Embedder(info, **settings).prepare()  # type: ignore[arg-type]
    return embedder.encode


def measure_queries(engine: str, texts: list[str], warmup: int) -> dict[str, Any]:
    embed = _embed(engine)
    samples = []
    for n, text in enumerate(texts):
        start = time.perf_counter()
        embed([text])
        if n >= warmup:
            samples.append((time.perf_counter() - start) * 1000)
    return {"ms": samples}


def measure_bulk(engine: str, texts: list[str]) -> dict[str, Any]:
    embed = _embed(engine)
    embed(texts[:8])  # the first call's one-time costs are not throughput
    start = time.perf_counter()
    embed(texts)
    return {"chunks_per_s": len(texts) / (time.perf_counter() - start)}


def measure_search(
    engine: str, args: argparse.Namespace, queries: list[tuple[str, str]], qrels: Any
) -> dict[str, Any]:
    """``hybrid_search`` (top 10) with the engine, or txtai's search; ms and nDCG@10."""
    from search.metrics import ndcg_at_k

    if engine == TXTAI:
        from bench.embedding.txtai_index import txtai_embeddings
        from evals.search_quality import chunk_corpus, load_beir
        from search.model_files import model_info

        chunks = chunk_corpus(load_beir(args.dataset, args.split).corpus, "chunked")
        index, _ = txtai_embeddings(model_info(), chunks)

        def ranked(text: str) -> list[str]:
            return list(dict.fromkeys(chunks[int(i)].doc_id for i, _ in index.search(text, 10)))

        return _timed_searches(ranked, queries, args.warmup, qrels, ndcg_at_k)
    from search.hybrid import hybrid_search, search_connect
    from search.settings import SearchSettings
    from sql.database import named_database, server_conninfo
    from sql.settings import DatabaseSettings

    embed_engine = engine.removeprefix("hybrid_search, ")
    embedder = _embedder(embed_engine)
    db = named_database(server_conninfo(DatabaseSettings()), args.database)
    settings = SearchSettings()
    with search_connect(db, settings) as conn:

        def ranked(text: str) -> list[str]:
            result = hybrid_search(text, db=conn, embedder=embedder, top_k=10, settings=settings)
            return list(dict.fromkeys(h.source_path for h in result.hits))

        for _, text in queries:  # fills the database's caches before anything is timed
            ranked(text)
        return _timed_searches(ranked, queries, args.warmup, qrels, ndcg_at_k)


def _embedder(engine: str) -> Any:
    from search.embedder import Embedder
    from search.model_files import model_info

    precision = "fp32" if engine in (FP32, TORCH) else "int8"
    kind = "torch" if engine == TORCH else "onnx"
    return Embedder(model_info(), engine=kind, precision=precision).prepare()  # type: ignore[arg-type]


def _timed_searches(
    ranked: Any, queries: list[tuple[str, str]], warmup: int, qrels: Any, ndcg: Any
) -> dict[str, Any]:
    samples, quality = [], []
    for n, (qid, text) in enumerate(queries):
        start = time.perf_counter()
        ranking = ranked(text)
        ms = (time.perf_counter() - start) * 1000
        if n >= warmup:
            samples.append(ms)
            quality.append(ndcg(ranking, qrels[qid], 10))
    return {"ms": samples, "ndcg_at_10": sum(quality) / len(quality)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedding.alone", description=__doc__)
    parser.add_argument("part", choices=tuple(ENGINES))
    parser.add_argument("engine")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--bulk-chunks", type=int, default=512)
    parser.add_argument("--database", default="")
    args = parser.parse_args(argv)
    if args.engine not in ENGINES[args.part]:
        parser.error(f"{args.part} measures {', '.join(ENGINES[args.part])}, not {args.engine!r}")
    from evals.search_quality import chunk_corpus, load_beir

    data = load_beir(args.dataset, args.split)
    items = [(q, t.strip()[:500]) for q, t in data.queries.items()][: args.warmup + args.queries]
    if args.part == "query":
        result = measure_queries(args.engine, [t for _, t in items], args.warmup)
    elif args.part == "bulk":
        chunks = chunk_corpus(data.corpus, "chunked")[: args.bulk_chunks]
        result = measure_bulk(args.engine, [c.content for c in chunks])
    else:
        result = measure_search(args.engine, args, items, data.qrels)
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
