"""The large corpus: ``--scale`` chunks in ``kb_bench_search_scaled``, copies of the SciFact
chunks with their embeddings moved by noise, built once and reused while its
fingerprint holds."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import Progress

from bench import bench_queries
from evals import eval_queries
from sql.database import Database
from sql.queries import COPY_CHUNKS_TYPES, queries

SCALED_DATABASE = "kb_bench_search_scaled"
NOISE_SIGMA = 0.025
SEED = 7


def build_scaled(
    source: Database,
    target: Database,
    chunks_wanted: int,
    model: str,
    dimension: int,
    vectors: str | None = None,
) -> int:
    """Fill ``target`` with ``chunks_wanted`` chunks: whole copies of the source's
    documents (then part of one more), embeddings moved by noise. Returns the chunk
    count; a target already built alike (``vectors``: of the same precision) is reused."""
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
        "vectors": vectors or model,
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
                                "",  # no note card: SciFact abstracts have no front matter
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
