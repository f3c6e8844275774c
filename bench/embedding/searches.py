"""Search end to end: ``hybrid_search`` with each engine and txtai's hybrid search, for
the same queries taking turns in blocks (:func:`bench.embedding.engines.blocks`), with
nDCG@10 of what each returned."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress

from bench.embedding.engines import blocks
from evals.search_quality import EvalChunk
from search.embedder import Embedder
from search.hybrid import hybrid_search, search_connect
from search.metrics import ndcg_at_k, percentile
from search.settings import SearchSettings
from sql.database import Database

TXTAI = "txtai hybrid, search(q, 10)"
#: The last ``bench.search`` run of the numpy engine (the default then), committed.
PREVIOUS_COMMIT = "435c384"
PREVIOUS_ROW = "hybrid_search end to end"


def previous_default(repo: Path) -> dict[str, Any] | None:
    """The SciFact ``hybrid_search end to end`` row and the date of
    ``bench/results/search.md`` as committed at :data:`PREVIOUS_COMMIT`, or None
    when git cannot show it."""
    try:
        text = subprocess.run(
            ["git", "show", f"{PREVIOUS_COMMIT}:bench/results/search.md"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    date = re.search(r"^# Search latency \((\d{4}-\d{2}-\d{2})\)", text, re.M)
    section = text.split("(scifact)", 1)[-1].split("\n## ", 1)[0]
    row = re.search(rf"^\| {PREVIOUS_ROW} \| ([\d.]+) \| ([\d.]+) \|", section, re.M)
    if not (date and row):
        return None
    return {
        "commit": PREVIOUS_COMMIT,
        "date": date.group(1),
        "p50_ms": float(row.group(1)),
        "p95_ms": float(row.group(2)),
    }


def end_to_end(
    db: Database,
    embedders: dict[str, Embedder],
    settings: SearchSettings,
    queries: list[tuple[str, str]],
    warmup: int,
    qrels: dict[str, dict[str, int]],
    txtai: tuple[Any, list[EvalChunk]] | None,
) -> dict[str, dict[str, float]]:
    """p50 / p95 ms and mean nDCG@10 over ``queries[warmup:]`` (id, text) of
    ``hybrid_search`` (top 10) with each embedder and, given ``(embeddings, chunks)``,
    txtai's ``search(q, 10)``; a document ranks where its best chunk does."""
    with search_connect(db, settings) as conn:
        searches: dict[str, Callable[[str], list[str]]] = {}
        for label, embedder in embedders.items():

            def project(text: str, e: Embedder = embedder) -> list[str]:
                result = hybrid_search(text, db=conn, embedder=e, top_k=10, settings=settings)
                return list(dict.fromkeys(h.source_path for h in result.hits))

            searches[f"hybrid_search, {label}"] = project
        if txtai is not None:
            embeddings, chunks = txtai

            def other(text: str) -> list[str]:
                hits = embeddings.search(text, 10)
                return list(dict.fromkeys(chunks[int(i)].doc_id for i, _ in hits))

            searches[TXTAI] = other
        names = list(searches)
        samples: dict[str, list[float]] = {n: [] for n in names}
        quality: dict[str, list[float]] = {n: [] for n in names}
        with Progress(transient=True) as progress:
            task = progress.add_task("searches", total=len(queries) * (len(names) + 1))
            # a first pass fills the database's caches, so that no search runs on
            # pages another one just read for it
            first, *others = searches.values()
            for _, text in queries:
                first(text)
                progress.advance(task)
            for search in others:  # each one's own first call (a model's, a plan's)
                search(queries[0][1])
            for name, span in blocks(names, len(queries)):
                searches[name](queries[span[0]][1])  # settles in after the one before
                for n in span:
                    qid, text = queries[n]
                    start = time.perf_counter()
                    ranking = searches[name](text)
                    ms = (time.perf_counter() - start) * 1000
                    if n >= warmup:
                        samples[name].append(ms)
                        quality[name].append(ndcg_at_k(ranking, qrels[qid], 10))
                    progress.advance(task)
    return {
        name: {
            "p50_ms": percentile(v, 50),
            "p95_ms": percentile(v, 95),
            "n": len(v),
            "ndcg_at_10": sum(quality[name]) / len(quality[name]),
        }
        for name, v in samples.items()
    }
