"""The fast path for whole vendors: statistics and capping on a numpy graph skeleton.

Building an ``nx.MultiDiGraph`` of 10k relationships and running networkx's
PageRank costs about 200 ms in Python; the skeleton (ids, types, confidences
and edge ends as numpy arrays, the relationships read as one blob of
fixed-width records) gives the same numbers in a few tens of milliseconds.
The results are those of :mod:`kg.analysis` on the networkx graph - same
PageRank iteration, same tie-breaking - which ``tests/kg/test_skeleton.py``
checks on random graphs. The networkx graph
itself is built only when a caller asks for it (paths, neighbourhoods,
exports, notebooks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from numpy.typing import NDArray
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from kg.analysis import CENTRALITY, WEAK_BELOW, WEAK_TYPES, GraphStatistics, RankedEntity

# One record of kg_skeleton_relationships, network byte order, no padding.
RECORD = np.dtype([("id", ">i8"), ("source", ">i8"), ("target", ">i8"), ("confidence", ">f4")])


def parse_records(data: bytes | None) -> NDArray[Any]:
    """The relationship records of ``kg_skeleton_relationships`` as a structured array.

    >>> rows = parse_records(bytes(range(28)))
    >>> rows.shape, int(rows["id"][0])
    ((1,), 283686952306183)
    >>> parse_records(None).shape
    (0,)
    """
    if data is None:
        return np.zeros(0, dtype=RECORD)
    if len(data) % RECORD.itemsize:
        raise ValueError("relationship records are not a whole number of 28-byte rows")
    return np.frombuffer(data, dtype=RECORD)


@dataclass(frozen=True)
class Skeleton:
    """A vendor graph as arrays. Entity arrays are indexed 0..n-1 (``ids`` maps
    to entity ids); relationships refer to entity indexes."""

    vendor_id: int
    vendor: str
    last_updated: datetime | None
    ids: NDArray[np.int64]
    names: tuple[str, ...]
    types: tuple[str, ...]
    confidence: NDArray[np.float64]
    mentions: NDArray[np.int64]
    external: NDArray[np.bool_]
    rel_ids: NDArray[np.int64]
    source: NDArray[np.int64]
    target: NDArray[np.int64]
    rel_confidence: NDArray[np.float64]
    rel_type_counts: dict[str, int]
    rel_weak: NDArray[np.bool_]
    """Co-occurrence (:data:`kg.analysis.WEAK_TYPES`): listed after every typed one."""

    @property
    def n(self) -> int:
        return int(self.ids.size)

    @property
    def m(self) -> int:
        return int(self.rel_ids.size)


def make_skeleton(
    vendor_id: int,
    vendor: str,
    entity_rows: Sequence[Any],
    rel_ids: Sequence[int] | NDArray[Any],
    sources: Sequence[int] | NDArray[Any],
    targets: Sequence[int] | NDArray[Any],
    confidences: Sequence[float] | NDArray[Any],
    rel_type_counts: Mapping[str, int],
    last_updated: datetime | None = None,
    weak: Sequence[bool] | NDArray[Any] | None = None,
) -> Skeleton:
    """A skeleton from entity rows ``(id, name, type, confidence, mention_count,
    external)`` and relationship columns keyed by entity id; ``weak`` flags the
    co-occurrence relationships (none when omitted). Relationships whose ends are
    not among the entities are dropped."""
    columns = list(zip(*entity_rows, strict=True)) if entity_rows else [()] * 6
    ids = np.array(columns[0], dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    names = [columns[1][i] for i in order.tolist()]
    types = [columns[2][i] for i in order.tolist()]
    conf = np.array(columns[3], dtype=np.float64)[order]
    mentions = np.array(columns[4], dtype=np.int64)[order]
    external = np.array(columns[5], dtype=bool)[order]
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    s_idx = np.searchsorted(ids, src)
    t_idx = np.searchsorted(ids, dst)
    s_idx[s_idx >= ids.size] = 0
    t_idx[t_idx >= ids.size] = 0
    keep = (ids[s_idx] == src) & (ids[t_idx] == dst) if ids.size else np.zeros(src.size, bool)
    return Skeleton(
        vendor_id=vendor_id,
        vendor=vendor,
        last_updated=last_updated,
        ids=ids,
        names=tuple(names),
        types=tuple(types),
        confidence=conf,
        mentions=mentions,
        external=external,
        rel_ids=np.asarray(rel_ids, dtype=np.int64)[keep],
        source=s_idx[keep].astype(np.int64),
        target=t_idx[keep].astype(np.int64),
        rel_confidence=np.asarray(confidences, dtype=np.float64)[keep],
        rel_type_counts=dict(rel_type_counts),
        rel_weak=(np.zeros(src.size, bool) if weak is None else np.asarray(weak, bool))[keep],
    )


def pagerank(sk: Skeleton, alpha: float = 0.85, tol: float = 1e-6) -> NDArray[np.float64]:
    """networkx's PageRank over the undirected graph of typed relationships
    (confidence at least :data:`kg.analysis.WEAK_BELOW`) weighted by summed
    confidence (self-loops ignored), uniform teleport and dangling
    redistribution, L1 stop at ``n * tol``."""
    n = sk.n
    if n == 0:
        return np.zeros(0)
    used = (sk.source != sk.target) & (sk.rel_confidence >= WEAK_BELOW)
    s, t = sk.source[used], sk.target[used]
    w = np.maximum(sk.rel_confidence[used], 1e-6)
    matrix = sparse.coo_matrix(
        (np.concatenate([w, w]), (np.concatenate([s, t]), np.concatenate([t, s]))), shape=(n, n)
    ).tocsr()
    out = np.asarray(matrix.sum(axis=1)).ravel()
    scale = np.divide(1.0, out, out=np.zeros(n), where=out != 0)
    transition = sparse.diags(scale) @ matrix
    x = np.full(n, 1.0 / n)
    p = np.full(n, 1.0 / n)
    dangling = out == 0
    for _ in range(1000):
        last = x
        x = alpha * (x @ transition + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            return np.asarray(x, dtype=np.float64)
    return np.asarray(x, dtype=np.float64)  # pragma: no cover - converges at rate alpha


def entity_order(sk: Skeleton, ranks: NDArray[np.float64]) -> NDArray[np.int64]:
    """Entity indexes by PageRank, confidence, mention count, id (kg.analysis's rule)."""
    return np.lexsort((sk.ids, -sk.mentions, -sk.confidence, -np.round(ranks, 12)))


def relationship_order(
    sk: Skeleton, ranks: NDArray[np.float64], among: NDArray[np.bool_] | None = None
) -> NDArray[np.int64]:
    """Relationship indexes typed before co-occurrence, then by confidence, summed
    end PageRank, id; only those with both ends flagged in ``among`` when given."""
    pool = np.arange(sk.m)
    if among is not None:
        pool = pool[among[sk.source] & among[sk.target]]
    ends = np.round(ranks[sk.source[pool]] + ranks[sk.target[pool]], 12)
    order = np.lexsort((sk.rel_ids[pool], -ends, -sk.rel_confidence[pool], sk.rel_weak[pool]))
    return pool[order]


def _distribution(counts: Mapping[str, int]) -> dict[str, int]:
    return {k: int(v) for k, v in sorted(counts.items(), key=lambda p: (-p[1], p[0])) if v}


def statistics(sk: Skeleton, ranks: NDArray[np.float64], *, top: int = 10) -> GraphStatistics:
    """:func:`kg.analysis.statistics`, computed on the skeleton."""
    n, m = sk.n, sk.m
    own = ~sk.external
    degree = np.bincount(sk.source, minlength=n) + np.bincount(sk.target, minlength=n)
    if n:
        # csr sums duplicate (source, target) entries: nnz counts distinct pairs
        adjacency = sparse.coo_matrix((np.ones(m), (sk.source, sk.target)), shape=(n, n)).tocsr()
        pairs = adjacency.nnz - int(adjacency.diagonal().astype(bool).sum())
        count, labels = connected_components(adjacency, directed=True, connection="weak")
        largest = int(np.bincount(labels).max())
    else:
        pairs, count, largest = 0, 0, 0
    density = pairs / (n * (n - 1)) if n > 1 else 0.0
    order = [int(i) for i in entity_order(sk, ranks) if own[i]][:top]
    own_types = (
        Counter(t for t, o in zip(sk.types, own.tolist(), strict=True) if o)
        if sk.external.any()
        else Counter(sk.types)
    )
    return GraphStatistics(
        vendor=sk.vendor,
        entity_count=int(own.sum()),
        relationship_count=m,
        entity_type_distribution=_distribution(own_types),
        relationship_type_distribution=_distribution(sk.rel_type_counts),
        density=round(density, 6),
        connected_components=int(count),
        largest_component=largest,
        isolated_entities=int(((degree == 0) & own).sum()),
        external_entities=int(n - own.sum()),
        top_entities=tuple(
            RankedEntity(
                int(sk.ids[i]), sk.names[i], sk.types[i], round(float(ranks[i]), 6), int(degree[i])
            )
            for i in order
        ),
        centrality=CENTRALITY,
        last_updated=sk.last_updated,
    )


@dataclass(frozen=True, slots=True)
class Selection:
    """Which entities and relationships (indexes, in order) an answer shows."""

    entities: NDArray[np.int64]
    relationships: NDArray[np.int64]
    truncated: bool
    max_entities: int
    max_relationships: int


def select_capped(
    sk: Skeleton, ranks: NDArray[np.float64], max_entities: int, max_relationships: int
) -> Selection:
    """:func:`kg.analysis.capped`'s choice, as indexes."""
    kept = entity_order(sk, ranks)[:max_entities]
    flag = np.zeros(sk.n, dtype=bool)
    flag[kept] = True
    rels = relationship_order(sk, ranks, flag)[:max_relationships]
    return Selection(
        kept, rels, bool(kept.size < sk.n or rels.size < sk.m), max_entities, max_relationships
    )


def select_preview(sk: Skeleton, ranks: NDArray[np.float64], size: int = 5) -> Selection:
    """:func:`kg.analysis.preview`'s choice, as indexes."""
    top = entity_order(sk, ranks)[:size]
    flag = np.zeros(sk.n, dtype=bool)
    flag[top] = True
    inside = relationship_order(sk, ranks, flag)
    every = relationship_order(sk, ranks)
    touching = every[flag[sk.source[every]] != flag[sk.target[every]]]
    candidates = np.concatenate([inside, touching])
    weak = sk.rel_weak[candidates]
    chosen = np.concatenate([candidates[~weak], candidates[weak]])[:size]
    return Selection(top, chosen, bool(top.size < sk.n or chosen.size < sk.m), size, size)


def load_skeleton(
    conn: psycopg.Connection[Any], vendor_id: int, vendor: str, last_updated: datetime | None
) -> Skeleton:
    """Two statements: the entities, and every relationship as blobs of records
    with the type counts.
    Endpoints owned by other vendors are fetched by id when there are any."""
    from sql.queries import queries

    q = queries()
    cur = conn.cursor(row_factory=psycopg.rows.tuple_row)
    entities = cur.execute(q["kg_skeleton_entities"], {"vendor_id": vendor_id}).fetchall()
    groups = cur.execute(q["kg_skeleton_relationships"], {"vendor_id": vendor_id}).fetchall()
    types = {g[0]: int(g[1]) for g in groups}
    rows = parse_records(b"".join(bytes(g[2]) for g in groups) if groups else None)
    # the records come type by type, in the groups' order
    weak = np.concatenate(
        [np.full(int(g[1]), g[0] in WEAK_TYPES, dtype=bool) for g in groups] or [np.zeros(0, bool)]
    )
    # entities come sorted by id: an endpoint is known when searchsorted finds it
    known = np.fromiter((r[0] for r in entities), dtype=np.int64, count=len(entities))
    ends = np.concatenate([rows["source"], rows["target"]]).astype(np.int64)
    at = np.minimum(np.searchsorted(known, ends), max(known.size - 1, 0))
    unknown = ends if known.size == 0 else ends[known[at] != ends]
    missing = np.unique(unknown)
    if missing.size:
        extra = cur.execute(
            q["kg_entities_by_id"], {"ids": missing.tolist(), "vendor_id": vendor_id}
        ).fetchall()
        entities = entities + [(r[0], r[2], r[3], r[4], r[5], r[8]) for r in extra]
    return make_skeleton(
        vendor_id,
        vendor,
        entities,
        rows["id"],
        rows["source"],
        rows["target"],
        rows["confidence"],
        types,
        last_updated,
        weak,
    )
