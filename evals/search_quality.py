"""Retrieval evaluation on a BEIR dataset: vector arm, full-text arm and hybrid.

``python -m evals search --dataset DIR --split NAME [--json]``

The dataset is loaded into a database of its own on the same server
(``kb_eval_<dataset>_<chunking>``), never into the knowledge base. Documents
(title + text) are chunked to the model window like vendor notes are, and a
document scores by its best chunk. Embeddings are cached by content hash, so a
rerun embeds nothing. Every query runs the production hybrid statement once;
its two candidate lists give the vector and full-text arms, its fused order
(``KB_FUSION``, convex by default) the hybrid one, the same candidates fused by
RRF and by convex fusion ``hybrid_rrf`` / ``hybrid_convex``, and the product's
ranking (boosts at their defaults, neighbour collapse) ``hybrid_ranked``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from evals import eval_queries
from evals.cli import HarnessError, reported, show_report
from search.hybrid import DEFAULT_MAX_DF_RATIO, fetch_candidates
from search.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k
from search.query import SearchFilters
from search.ranking import Candidate, Reranker, rank_candidates, refuse
from search.rerank import RerankerUnavailable, load_reranker
from search.settings import SearchSettings
from sql.database import Database, bind_embedding_model, named_database, server_conninfo
from sql.queries import COPY_CHUNKS_TYPES, queries
from sql.settings import DatabaseSettings

if TYPE_CHECKING:
    from search.embedder import Embedder

CHUNKINGS = ("chunked", "whole")
_stderr = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class BeirDataset:
    name: str
    corpus: dict[str, tuple[str, str]]
    """doc id -> (title, text)"""
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    """query id -> doc id -> relevance, only queries of the split"""


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_beir(folder: Path, split: str) -> BeirDataset:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``."""
    for needed in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (folder / needed).is_file():
            raise HarnessError(f"{folder / needed} is missing (not a BEIR dataset folder?)")
    corpus = {
        str(d["_id"]): (str(d.get("title") or ""), str(d.get("text") or ""))
        for d in _jsonl(folder / "corpus.jsonl")
    }
    all_queries = {str(q["_id"]): str(q["text"]) for q in _jsonl(folder / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with (folder / f"qrels/{split}.tsv").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (n == 0 and not parts[2].lstrip("-").isdigit()):
                continue  # the header line
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    used = {q: qrels[q] for q in qrels if q in all_queries}
    return BeirDataset(
        name=folder.resolve().name,
        corpus=corpus,
        queries={q: all_queries[q] for q in used},
        qrels=used,
    )


# --- loading --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalChunk:
    doc_id: str
    index: int
    total: int
    header: str
    content: str
    token_count: int

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


def chunk_corpus(corpus: dict[str, tuple[str, str]], chunking: str) -> list[EvalChunk]:
    """Chunks of every document: title as header, cut to the model window or whole."""
    from extraction.notes.chunking import chunk_markdown, default_counter

    counter = default_counter()
    out: list[EvalChunk] = []
    for doc_id, (title, text) in corpus.items():
        if chunking == "whole":
            content = f"{title}\n\n{text}" if title else text
            out.append(EvalChunk(doc_id, 0, 1, title, content, counter.count(content)))
            continue
        for c in chunk_markdown(text, title=title, counter=counter, fallback=title):
            out.append(EvalChunk(doc_id, c.index, c.total, c.header, c.content, c.token_count))
    return out


def database_name(dataset: str, chunking: str) -> str:
    """``kb_eval_<dataset>_<chunking>``, lower-case letters, digits and _ only.

    >>> database_name("SciFact-v2", "chunked")
    'kb_eval_scifact_v2_chunked'
    """
    slug = re.sub(r"[^a-z0-9]+", "_", dataset.lower()).strip("_") or "dataset"
    return f"kb_eval_{slug[:40]}_{chunking}"


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def load_corpus(
    db: Database, data: BeirDataset, chunks: list[EvalChunk], embedder: Embedder
) -> bool:
    """Make the database hold exactly these chunks; False when it already did."""
    q = {**queries(), **eval_queries()}
    model = embedder.info
    vectors_name = embedder.name  # the model, and its precision unless fp32
    fingerprint = hashlib.sha256(vectors_name.encode())
    for c in chunks:
        fingerprint.update(f"{c.doc_id}\t{c.index}\t{c.content_hash}\n".encode())
    with db.connect() as conn:
        bind_embedding_model(conn, model.name, model.dimension)
        current = conn.execute(q["get_meta"], {"key": "eval_corpus"}).fetchone()
        if current is not None and current["value"].get("fingerprint") == fingerprint.hexdigest():
            return False
        texts = {c.content_hash: c.content for c in chunks}
        missing = [
            r["content_hash"]
            for r in conn.execute(
                q["missing_embeddings"], {"hashes": list(texts), "model": vectors_name}
            )
        ]
        with Progress(console=_stderr, transient=False) as progress:
            task = progress.add_task("embedding corpus", total=len(missing))
            for batch in _batches(missing, 256):
                vectors = embedder.encode([texts[h] for h in batch])
                with conn.cursor().copy(q["copy_embedding_cache"]) as copy:
                    copy.set_types(["text", "text", "vector"])
                    for h, v in zip(batch, vectors, strict=True):
                        copy.write_row((vectors_name, h, v))
                conn.commit()  # a killed run keeps what it embedded
                progress.advance(task, len(batch))
        vectors_by_hash = {
            r["content_hash"]: r["embedding"]
            for r in conn.execute(
                q["fetch_embeddings"], {"hashes": list(texts), "model": vectors_name}
            )
        }
        conn.execute(q["eval_clear"])
        conn.execute(q["eval_insert_vendor"], {"name": data.name, "normalized_name": data.name})
        doc_ids = {doc_id: n for n, doc_id in enumerate(data.corpus, start=1)}
        with conn.cursor().copy(q["eval_copy_documents"]) as copy:
            copy.set_types(["int8", "text", "int8", "text", "text", "jsonb", "text"])
            for doc_id, n in doc_ids.items():
                title, text = data.corpus[doc_id]
                digest = hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()
                copy.write_row((n, doc_id, 1, data.name, title, Jsonb({}), digest))
        with conn.cursor().copy(q["copy_chunks"]) as copy:
            copy.set_types(list(COPY_CHUNKS_TYPES))
            for c in chunks:
                copy.write_row(
                    (
                        doc_ids[c.doc_id],
                        c.index,
                        c.total,
                        c.header,
                        c.content,
                        c.content_hash,
                        c.token_count,
                        0,
                        c.content_hash,
                        vectors_by_hash[c.content_hash],
                        Jsonb({}),
                        "",  # no note card: a BEIR document has no front matter
                    )
                )
        conn.execute(q["eval_fix_sequences"])
        conn.execute(
            q["set_meta"],
            {"key": "eval_corpus", "value": Jsonb({"fingerprint": fingerprint.hexdigest()})},
        )
        conn.commit()
        conn.autocommit = True
        conn.execute(q["eval_analyze"])
    return True


# --- running --------------------------------------------------------------------------------


def doc_rankings(rows: Sequence[Candidate], chunk_doc: dict[int, str]) -> dict[str, list[str]]:
    """Document rankings of each arm; a document ranks where its best chunk does.

    ``hybrid_doc`` fuses the two arms' document rankings instead of chunk ranks.
    """

    def unique(ids: Iterable[str]) -> list[str]:
        return list(dict.fromkeys(ids))

    vector = unique(
        chunk_doc[r.chunk_id]
        for r in sorted((r for r in rows if r.vector_rank), key=lambda r: r.vector_rank or 0)
    )
    fulltext = unique(
        chunk_doc[r.chunk_id]
        for r in sorted((r for r in rows if r.fulltext_rank), key=lambda r: r.fulltext_rank or 0)
    )
    hybrid = unique(chunk_doc[r.chunk_id] for r in rows)  # rows come in fused order
    from search.fusion import rrf_scores

    scores = rrf_scores([vector, fulltext])
    hybrid_doc = sorted(scores, key=lambda d: (-scores[d], d))
    return {"vector": vector, "fulltext": fulltext, "hybrid": hybrid, "hybrid_doc": hybrid_doc}


@dataclass
class ArmScores:
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float


def score_arm(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> ArmScores:
    n = len(runs) or 1
    return ArmScores(
        ndcg_at_10=sum(ndcg_at_k(r, qrels[q], 10) for q, r in runs.items()) / n,
        recall_at_100=sum(recall_at_k(r, qrels[q], 100) for q, r in runs.items()) / n,
        mrr_at_10=sum(mrr_at_k(r, qrels[q], 10) for q, r in runs.items()) / n,
    )


def _timed_fetch(
    conn: Any, text: str, vector: Any, fetch_args: dict[str, Any], *, exact: bool
) -> tuple[list[Any], float]:
    """One unfiltered search and its latency in milliseconds."""
    start = time.perf_counter()
    rows = fetch_candidates(conn, text, vector, SearchFilters(), exact=exact, **fetch_args)
    return rows, (time.perf_counter() - start) * 1000


def evaluate(
    db: Database,
    data: BeirDataset,
    embedder: Embedder,
    settings: SearchSettings,
    *,
    candidates: int,
    exact: bool = True,
    max_df_ratio: float = DEFAULT_MAX_DF_RATIO,
    limit: int | None = None,
    reranker: Reranker | None = None,
) -> dict[str, Any]:
    """Every arm's scores over ``data``'s judged queries; with ``reranker``, also
    the product ranking reranked (arm ``hybrid_reranked``) and the stage's latency."""
    qids = list(data.queries)[:limit] if limit else list(data.queries)
    texts = [data.queries[q].strip() for q in qids]
    vectors = embedder.encode(texts)
    embed_ms = []
    for text in texts[:50]:  # one query at a time, as a search embeds it
        start = time.perf_counter()
        embedder.encode([text])
        embed_ms.append((time.perf_counter() - start) * 1000)
    fetch_args: dict[str, Any] = {
        **settings.statement_args(),
        "candidates": candidates,
        "max_df_ratio": max_df_ratio,
    }
    runs: dict[str, dict[str, list[str]]] = {}
    latency: list[float] = []
    exact_latency: list[float] = []
    rerank_latency: list[float] = []
    with db.connect() as conn:
        chunk_doc = {
            r["chunk_id"]: r["source_path"]
            for r in conn.execute(eval_queries()["eval_chunk_documents"])
        }
        with Progress(console=_stderr) as progress:
            task = progress.add_task("running queries", total=len(qids) * (2 if exact else 1))
            for qid, text, vector in zip(qids, texts, vectors, strict=True):
                rows, ms = _timed_fetch(conn, text, vector, fetch_args, exact=False)
                latency.append(ms)
                for arm, ranking in doc_rankings(rows, chunk_doc).items():
                    runs.setdefault(arm, {})[qid] = ranking
                # both fusions of the same candidates, whichever the statement used
                for fusion in ("rrf", "convex"):
                    fused = refuse(
                        rows, fusion, rrf_k=settings.rrf_k, vector_weight=settings.vector_weight
                    )
                    runs.setdefault(f"hybrid_{fusion}", {})[qid] = list(
                        dict.fromkeys(chunk_doc[c.chunk_id] for c in fused)
                    )
                # the product's own ranking: boosts (defaults) and neighbour collapse
                hits = rank_candidates(rows, text, settings)
                runs.setdefault("hybrid_ranked", {})[qid] = list(
                    dict.fromkeys(chunk_doc[h.chunk_id] for h in hits)
                )
                if reranker is not None:
                    start = time.perf_counter()
                    hits = rank_candidates(rows, text, settings, reranker=reranker)
                    rerank_latency.append((time.perf_counter() - start) * 1000)
                    runs.setdefault("hybrid_reranked", {})[qid] = list(
                        dict.fromkeys(chunk_doc[h.chunk_id] for h in hits)
                    )
                progress.advance(task)
                if exact:
                    rows, ms = _timed_fetch(conn, text, vector, fetch_args, exact=True)
                    exact_latency.append(ms)
                    rankings = doc_rankings(rows, chunk_doc)
                    runs.setdefault("vector_exact", {})[qid] = rankings["vector"]
                    runs.setdefault("hybrid_exact", {})[qid] = rankings["hybrid"]
                    progress.advance(task)
    qrels = {q: data.qrels[q] for q in qids}
    return {
        "dataset": data.name,
        "queries": len(qids),
        "documents": len(data.corpus),
        "chunks": len(chunk_doc),
        "candidates": candidates,
        "fusion": settings.fusion,
        "rrf_k": settings.rrf_k,
        "vector_weight": settings.vector_weight,
        "ef_search": settings.hnsw_ef_search,
        "bm25_k1": settings.bm25_k1,
        "bm25_b": settings.bm25_b,
        "max_df_ratio": max_df_ratio,
        "arms": {arm: asdict(score_arm(r, qrels)) for arm, r in runs.items()},
        "latency_ms": {
            "hybrid_sql_p50": percentile(latency, 50),
            "hybrid_sql_p95": percentile(latency, 95),
            "exact_sql_p50": percentile(exact_latency, 50) if exact_latency else None,
            "query_embedding_p50": percentile(embed_ms, 50),
            "query_embedding_p95": percentile(embed_ms, 95),
            # the ranking with the rerank stage (its model's scoring of the head)
            "rerank_p50": percentile(rerank_latency, 50) if rerank_latency else None,
            "rerank_p95": percentile(rerank_latency, 95) if rerank_latency else None,
        },
        "rerank_model": str(settings.rerank_model_path) if reranker is not None else None,
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"{report['dataset']}: {report['queries']} queries, {report['documents']} documents, "
        f"{report['chunks']} chunks ({report['chunking']})"
    )
    for column in ("arm", "nDCG@10", "Recall@100", "MRR@10"):
        table.add_column(column, justify="left" if column == "arm" else "right")
    for arm, s in report["arms"].items():
        table.add_row(
            arm, f"{s['ndcg_at_10']:.4f}", f"{s['recall_at_100']:.4f}", f"{s['mrr_at_10']:.4f}"
        )
    console.print(table)
    lat = report["latency_ms"]
    console.print(
        f"hybrid statement (both arms + fusion, one round trip): p50 "
        f"{lat['hybrid_sql_p50']:.1f} ms, "
        f"p95 {lat['hybrid_sql_p95']:.1f} ms; query embedding p50 "
        f"{lat['query_embedding_p50']:.1f} ms, p95 {lat['query_embedding_p95']:.1f} ms"
    )
    if lat.get("rerank_p50") is not None:
        console.print(
            f"ranking with the rerank stage ({report['rerank_model']}): p50 "
            f"{lat['rerank_p50']:.1f} ms, p95 {lat['rerank_p95']:.1f} ms"
        )
    else:
        console.print("rerank stage: off (set KB_RERANK_MODEL or --rerank-model to add it)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals search", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--dataset", type=Path, required=True, help="BEIR dataset folder")
    parser.add_argument("--split", default="test", help="qrels split (default: test)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--chunking",
        choices=CHUNKINGS,
        default="chunked",
        help="chunked to the model window (default) or whole documents",
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=200,
        help="depth of each arm (default 200, enough for Recall@100 of documents)",
    )
    parser.add_argument("--limit", type=int, default=None, help="evaluate the first N queries")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact-scan comparison")
    parser.add_argument(
        "--max-df-ratio",
        type=float,
        default=DEFAULT_MAX_DF_RATIO,
        help="full-text candidates come from lexemes in at most this share of chunks",
    )
    parser.add_argument(
        "--rerank-model",
        type=Path,
        default=None,
        help="local cross-encoder folder: adds the reranked arm (default: KB_RERANK_MODEL)",
    )
    args = parser.parse_args(argv)
    if args.candidates < 1:
        parser.error("--candidates must be positive")
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from search.embedder import Embedder, EmbeddingSettings

    settings = SearchSettings()
    if args.rerank_model is not None:
        settings = settings.model_copy(update={"rerank_model_path": args.rerank_model})
    try:
        reranker = load_reranker(settings)
    except RerankerUnavailable as exc:
        raise HarnessError(str(exc)) from None
    data = load_beir(args.dataset, args.split)
    chunks = chunk_corpus(data.corpus, args.chunking)
    server = server_conninfo(DatabaseSettings())
    db = named_database(server, database_name(data.name, args.chunking))
    embedder = Embedder.from_settings(EmbeddingSettings())
    loaded = load_corpus(db, data, chunks, embedder)
    _stderr.print(f"{'loaded' if loaded else 'reusing'} {len(chunks)} chunks in {db.description}")
    report = evaluate(
        db,
        data,
        embedder,
        settings,
        candidates=args.candidates,
        exact=not args.no_exact,
        max_df_ratio=args.max_df_ratio,
        limit=args.limit,
        reranker=reranker,
    )
    report["chunking"] = args.chunking
    report["split"] = args.split
    return show_report(report, args.json, lambda: print_report(report, Console()))


if __name__ == "__main__":
    sys.exit(main())
