"""Retrieval metrics (binary or graded relevance), as BEIR / TREC define them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain of the first ``k`` results.

    Gains are the graded relevances (``rel / log2(rank + 1)``), as in
    ``pytrec_eval``'s ``ndcg_cut``.

    Examples
    --------
    >>> ndcg_at_k(["a", "b"], {"a": 1})
    1.0
    >>> round(ndcg_at_k(["x", "a"], {"a": 1}), 4)
    0.6309
    >>> ndcg_at_k(["x"], {})
    0.0
    """
    dcg = sum(qrels.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    idcg = sum(rel / math.log2(rank + 2) for rank, rel in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the first ``k`` results.

    >>> recall_at_k(["a", "x", "b"], {"a": 1, "b": 1}, k=2)
    0.5
    """
    relevant = {doc for doc, rel in qrels.items() if rel > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant result within ``k`` (0 if none).

    >>> mrr_at_k(["x", "y", "a"], {"a": 1})
    0.3333333333333333
    >>> mrr_at_k(["x"], {"a": 1})
    0.0
    """
    for rank, doc in enumerate(ranked[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, ``q`` in [0, 100].

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
    >>> percentile([5.0], 95)
    5.0
    """
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
