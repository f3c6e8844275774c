"""The engines side by side: one query at a time, and a bulk of chunks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from rich.progress import Progress

from search.embedder import Embedder
from search.metrics import percentile
from search.model_files import ModelInfo, quiet_offline_transformers

BARE = "bare SentenceTransformer.encode"
BULK_BATCH = 64


def bare_model(info: ModelInfo) -> Any:
    """The floor: sentence-transformers itself on the packaged folder, offline, cut at
    the model's window as the project cuts it."""
    quiet_offline_transformers()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(info.path), device="cpu", local_files_only=True)
    model.max_seq_length = info.max_seq_length
    return model


def query_engines(model: Any, embedders: dict[str, Embedder]) -> dict[str, Callable[[str], Any]]:
    """Each engine as ``embed(query)``, one query per call; the bare floor first."""
    engines: dict[str, Callable[[str], Any]] = {BARE: lambda q: model.encode([q])}
    for label, embedder in embedders.items():
        engines[label] = one_at_a_time(embedder)
    return engines


def one_at_a_time(embedder: Embedder) -> Callable[[str], Any]:
    return lambda q: embedder.encode([q])


#: Items an engine runs in a row before the next engine takes its turn.
BLOCK = 50


def blocks(names: Sequence[str], count: int, size: int = BLOCK) -> Iterator[tuple[str, range]]:
    """The turns engines take over ``count`` items: blocks of ``size`` items, each
    engine running a whole block (its first call there untimed) before the next
    one, the engines' order rotating from block to block.

    Not one item per engine in turn: an engine timed right after another shares
    the cores with whatever the other leaves running (torch's worker threads keep
    spinning for a while after a call). Interleaved query by query, the default
    engine's ``hybrid_search`` p50 was 17.6 ms here, while ``bench.search``, with
    no torch in its process, measured 12.5 ms the same day (2026-11-26).

    >>> [(n, list(r)) for n, r in blocks(["a", "b"], 3, size=2)]
    [('a', [0, 1]), ('b', [0, 1]), ('b', [2]), ('a', [2])]
    """
    for b, start in enumerate(range(0, count, size)):
        span = range(start, min(start + size, count))
        for i in range(len(names)):
            yield names[(b + i) % len(names)], span


def query_latency(
    engines: dict[str, Callable[[str], Any]], texts: list[str], warmup: int
) -> dict[str, dict[str, float]]:
    """p50 / p95 ms of each engine over ``texts[warmup:]``, the engines taking turns
    in :func:`blocks`."""
    names = list(engines)
    samples: dict[str, list[float]] = {n: [] for n in names}
    with Progress(transient=True) as progress:
        task = progress.add_task("query embedding", total=len(texts) * len(names))
        for name, span in blocks(names, len(texts)):
            engines[name](texts[span[0]])  # settles in after the engine before it
            for n in span:
                start = time.perf_counter()
                engines[name](texts[n])
                ms = (time.perf_counter() - start) * 1000
                if n >= warmup:
                    samples[name].append(ms)
                progress.advance(task)
    floor = percentile(samples[BARE], 50)
    return {
        name: {
            "p50_ms": percentile(v, 50),
            "p95_ms": percentile(v, 95),
            "n": len(v),
            "ratio_to_bare": percentile(v, 50) / floor,
        }
        for name, v in samples.items()
    }


def bulk_throughput(
    model: Any, embedders: dict[str, Embedder], texts: list[str], repeats: int
) -> dict[str, dict[str, Any]]:
    """Chunks per second of each engine embedding all of ``texts`` in one call; the
    median of ``repeats``, the engines interleaved (and rotated) within each repeat."""
    runs: dict[str, Callable[[], Any]] = {
        BARE: lambda: model.encode(texts, batch_size=BULK_BATCH, show_progress_bar=False)
    }
    for label, embedder in embedders.items():
        runs[label] = partial(embedder.encode, texts)
    names = list(runs)
    rates: dict[str, list[float]] = {n: [] for n in names}
    with Progress(transient=True) as progress:
        task = progress.add_task(f"bulk, {len(texts)} chunks", total=repeats * len(names))
        for r in range(repeats):
            for i in range(len(names)):
                name = names[(r + i) % len(names)]
                start = time.perf_counter()
                runs[name]()
                rates[name].append(len(texts) / (time.perf_counter() - start))
                progress.advance(task)
    floor = statistics.median(rates[BARE])
    return {
        name: {
            "chunks_per_s": statistics.median(v),
            "repeats": v,
            "ratio_to_bare": statistics.median(v) / floor,
        }
        for name, v in rates.items()
    }
