"""The numpy skeleton gives kg.analysis's answers (networkx), on random graphs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.analysis import capped, importance, preview, statistics
from kg.model import build_graph
from kg.skeleton import (
    make_skeleton,
    pagerank,
    parse_records,
    select_capped,
    select_preview,
)
from kg.skeleton import statistics as sk_statistics

TYPES = ("PARTNERS_WITH", "PRODUCES", "MENTIONED_WITH")


def _both(n: int, edges: list[tuple[int, int, int, float]], external: set[int]):
    entities = [
        {
            "id": 10 + i,
            "name": f"e{i}",
            "type": ("ORG", "PRODUCT")[i % 2],
            "confidence": round(0.3 + (i % 4) / 10, 2),
            "mention_count": i % 3,
            "external": i in external,
        }
        for i in range(n)
    ]
    rels = [
        {"id": 500 + k, "source_id": 10 + u, "target_id": 10 + v, "type": TYPES[t], "confidence": c}
        for k, (u, v, t, c) in enumerate(edges)
    ]
    g = build_graph(1, "R", entities, rels)
    rows = [
        (e["id"], e["name"], e["type"], e["confidence"], e["mention_count"], e["external"])
        for e in entities
    ]
    sk = make_skeleton(
        1,
        "R",
        rows,
        [r["id"] for r in rels],
        [r["source_id"] for r in rels],
        [r["target_id"] for r in rels],
        np.array([r["confidence"] for r in rels], dtype=np.float32).astype(np.float64),
        Counter(r["type"] for r in rels),
        weak=[r["type"] == "MENTIONED_WITH" for r in rels],
    )
    return g, sk


graphs = st.integers(min_value=0, max_value=30).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(
                st.integers(0, max(n - 1, 0)),
                st.integers(0, max(n - 1, 0)),
                st.integers(0, 2),
                st.sampled_from([0.25, 0.5, 0.75, 0.9]),
            ),
            max_size=0 if n == 0 else 80,
        ),
        st.sets(st.integers(0, max(n - 1, 0)), max_size=3),
    )
)


@settings(max_examples=80, deadline=None)
@given(graph=graphs, max_e=st.integers(0, 35), max_r=st.integers(0, 90))
def test_skeleton_matches_networkx(graph, max_e: int, max_r: int) -> None:
    n, edges, external = graph
    # build_graph keeps float32-rounded confidences the way PostgreSQL's real does
    edges = [(u, v, t, float(np.float32(c))) for u, v, t, c in edges]
    g, sk = _both(n, edges, external if n else set())
    ranks_nx = importance(g)
    ranks_sk = pagerank(sk)
    assert np.allclose([ranks_nx[int(i)] for i in sk.ids], ranks_sk, atol=1e-12)
    a, b = statistics(g, ranks_nx), sk_statistics(sk, ranks_sk)
    assert a == b
    cap = capped(g, max_e, max_r, ranks_nx)
    sel = select_capped(sk, ranks_sk, max_e, max_r)
    assert [e.id for e in cap.entities] == [int(sk.ids[i]) for i in sel.entities]
    assert [r.id for r in cap.relationships] == [int(sk.rel_ids[i]) for i in sel.relationships]
    assert cap.truncated == sel.truncated
    pre, psel = preview(g, ranks_nx), select_preview(sk, ranks_sk)
    assert [e.id for e in pre.entities] == [int(sk.ids[i]) for i in psel.entities]
    assert [r.id for r in pre.relationships] == [int(sk.rel_ids[i]) for i in psel.relationships]


def test_record_blob_errors_are_caught() -> None:
    with pytest.raises(ValueError, match="28-byte"):
        parse_records(b"x" * 29)
