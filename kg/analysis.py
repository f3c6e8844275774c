"""Statistics, importance and capping of a vendor graph: pure functions of the graph.

**Importance rule** (used by the capped graph, the preview and "top
entities"): PageRank over the graph with every relationship taken both ways
and weighted by its confidence (damping 0.85), then the entity's own
confidence, then its mention count, then its id, so the order is stable from
call to call. Weak relationships (confidence under :data:`WEAK_BELOW`: the
co-occurrence MENTIONED_WITH, at most 0.3, while every typed relationship the
extraction stores has 0.4 or more) take no part in PageRank, so co-occurrence
never outranks typed facts; they still count in the statistics.

**Relationship order** (capped graphs, the preview): every typed relationship
before any co-occurrence (:data:`WEAK_TYPES`: MENTIONED_WITH), then by
confidence, by the summed PageRank of their two ends, by id; a capped graph keeps
only relationships whose both ends it kept. The preview's five are the typed
relationships among its five entities, then those touching them, and only then
co-occurrence, so that its five are the most informative the graph has; every
relationship carries its ends' names, so one whose other end is not among the five
still reads alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import networkx as nx

from kg.model import Entity, Relationship, entity, relationship

CENTRALITY = "pagerank"
PREVIEW_SIZE = 5
WEAK_BELOW = 0.35
#: Relationship types that only say two names were mentioned together: listed after
#: every typed relationship.
WEAK_TYPES = frozenset({"MENTIONED_WITH"})


def importance(graph: nx.MultiDiGraph) -> dict[int, float]:
    """PageRank of each node over the undirected, confidence-weighted graph of
    its typed relationships (see the importance rule).

    >>> g = nx.MultiDiGraph()
    >>> g.add_edge(1, 2, confidence=1.0); g.add_edge(1, 3, confidence=1.0)
    0
    0
    >>> rank = importance(g)
    >>> rank[1] > rank[2] == rank[3]
    True
    """
    if graph.number_of_nodes() == 0:
        return {}
    simple = nx.Graph()
    simple.add_nodes_from(graph)
    for u, v, conf in graph.edges(data="confidence", default=0.0):
        if u == v or float(conf) < WEAK_BELOW:
            continue
        w = simple.get_edge_data(u, v, {}).get("weight", 0.0)
        simple.add_edge(u, v, weight=w + max(float(conf), 1e-6))
    # converges at rate alpha: 1e-6 per node within ~130 iterations on any graph
    ranks: dict[int, float] = nx.pagerank(
        simple, alpha=0.85, weight="weight", tol=1e-6, max_iter=1000
    )
    return ranks


def entity_order(graph: nx.MultiDiGraph, ranks: dict[int, float]) -> list[int]:
    """Nodes by the importance rule: PageRank, confidence, mention count, id."""
    nodes = graph.nodes
    return sorted(
        graph,
        key=lambda n: (
            -round(ranks.get(n, 0.0), 12),
            -nodes[n]["confidence"],
            -nodes[n]["mention_count"],
            n,
        ),
    )


def relationship_order(
    graph: nx.MultiDiGraph, ranks: dict[int, float], nodes: set[int] | None = None
) -> list[tuple[int, int, int]]:
    """Edges (u, v, key): typed before co-occurrence, then by confidence, summed end
    PageRank, id; only edges with both ends in ``nodes`` when given.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": f"e{i}", "type": "ORG", "confidence": 1.0, "mention_count": 1}
    ...      for i in (1, 2, 3)],
    ...     [{"id": 7, "source_id": 1, "target_id": 2, "type": "MENTIONED_WITH",
    ...       "confidence": 0.9},
    ...      {"id": 8, "source_id": 1, "target_id": 3, "type": "PARTNERS_WITH",
    ...       "confidence": 0.4}])
    >>> [k for _, _, k in relationship_order(g, importance(g))]
    [8, 7]
    """
    edges = [
        (u, v, k, conf, kind in WEAK_TYPES)
        for u, v, k, conf, kind in (
            (u, v, k, d["confidence"], d["type"])
            for u, v, k, d in graph.edges(keys=True, data=True)
        )
        if nodes is None or (u in nodes and v in nodes)
    ]
    edges.sort(
        key=lambda e: (e[4], -e[3], -round(ranks.get(e[0], 0) + ranks.get(e[1], 0), 12), e[2])
    )
    return [(u, v, k) for u, v, k, _, _ in edges]


@dataclass(frozen=True, slots=True)
class RankedEntity:
    id: int
    name: str
    type: str
    pagerank: float
    degree: int


@dataclass(frozen=True, slots=True)
class GraphStatistics:
    """``find_vendor_info``'s metadata answer for one vendor.

    Counts are the vendor's own entities; ``external_entities`` are other
    vendors' entities its relationships point at. ``density`` is that of the
    directed graph without parallel edges (edges / n(n-1)); components are
    weakly connected; ``top_entities`` are ranked by ``centrality``.
    """

    vendor: str
    entity_count: int
    relationship_count: int
    entity_type_distribution: dict[str, int]
    relationship_type_distribution: dict[str, int]
    density: float
    connected_components: int
    largest_component: int
    isolated_entities: int
    external_entities: int
    top_entities: tuple[RankedEntity, ...]
    centrality: str
    last_updated: datetime | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "vendor": self.vendor,
            "entity_count": self.entity_count,
            "relationship_count": self.relationship_count,
            "entity_type_distribution": dict(self.entity_type_distribution),
            "relationship_type_distribution": dict(self.relationship_type_distribution),
            "density": self.density,
            "connected_components": self.connected_components,
            "largest_component": self.largest_component,
            "isolated_entities": self.isolated_entities,
            "external_entities": self.external_entities,
            "top_entities": [
                {
                    "id": e.id,
                    "name": e.name,
                    "type": e.type,
                    "pagerank": e.pagerank,
                    "degree": e.degree,
                }
                for e in self.top_entities
            ],
            "centrality": self.centrality,
            "last_updated": self.last_updated.isoformat() if self.last_updated else None,
        }


def _distribution(values: Any) -> dict[str, int]:
    counts = Counter(values)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def statistics(
    graph: nx.MultiDiGraph, ranks: dict[int, float] | None = None, *, top: int = 10
) -> GraphStatistics:
    """Counts, distributions, density, components and the most central entities.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": n, "type": t, "confidence": 1.0, "mention_count": 1}
    ...      for i, n, t in [(1, "Acme", "ORG"), (2, "Rocket", "PRODUCT"),
    ...                      (3, "Mesa", "LOCATION")]],
    ...     [{"id": 9, "source_id": 1, "target_id": 2, "type": "PRODUCES", "confidence": 0.9}])
    >>> s = statistics(g)
    >>> s.entity_count, s.relationship_count, s.connected_components, s.isolated_entities
    (3, 1, 2, 1)
    >>> s.entity_type_distribution
    {'LOCATION': 1, 'ORG': 1, 'PRODUCT': 1}
    """
    ranks = importance(graph) if ranks is None else ranks
    own = [n for n, ext in graph.nodes(data="external") if not ext]
    n = graph.number_of_nodes()
    pairs = {(u, v) for u, v in graph.edges() if u != v}
    density = len(pairs) / (n * (n - 1)) if n > 1 else 0.0
    components = list(nx.weakly_connected_components(graph)) if n else []
    order = [node for node in entity_order(graph, ranks) if not graph.nodes[node]["external"]]
    return GraphStatistics(
        vendor=graph.graph.get("vendor", ""),
        entity_count=len(own),
        relationship_count=graph.number_of_edges(),
        entity_type_distribution=_distribution(graph.nodes[x]["type"] for x in own),
        relationship_type_distribution=_distribution(t for _, _, t in graph.edges(data="type")),
        density=round(density, 6),
        connected_components=len(components),
        largest_component=max((len(c) for c in components), default=0),
        isolated_entities=sum(1 for x in own if graph.degree(x) == 0),
        external_entities=n - len(own),
        top_entities=tuple(
            RankedEntity(
                x,
                graph.nodes[x]["name"],
                graph.nodes[x]["type"],
                round(ranks.get(x, 0.0), 6),
                int(graph.degree(x)),
            )
            for x in order[:top]
        ),
        centrality=CENTRALITY,
        last_updated=graph.graph.get("last_updated"),
    )


@dataclass(frozen=True, slots=True)
class CappedGraph:
    """At most ``max_entities`` entities and ``max_relationships`` relationships,
    chosen by the importance rule; ``truncated`` says whether anything was left
    out of the totals."""

    vendor: str
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]
    truncated: bool
    total_entities: int
    total_relationships: int
    max_entities: int
    max_relationships: int

    def node_ids(self) -> set[int]:
        return {e.id for e in self.entities}


def capped(
    graph: nx.MultiDiGraph,
    max_entities: int = 100,
    max_relationships: int = 500,
    ranks: dict[int, float] | None = None,
) -> CappedGraph:
    """The most important part of a graph within the caps.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": f"e{i}", "type": "ORG", "confidence": 1.0, "mention_count": 1}
    ...      for i in range(1, 5)],
    ...     [{"id": 10 + i, "source_id": 1, "target_id": i, "type": "PARTNERS_WITH",
    ...       "confidence": 0.5} for i in range(2, 5)])
    >>> c = capped(g, max_entities=2, max_relationships=10)
    >>> [e.id for e in c.entities][0], len(c.relationships), c.truncated, c.total_relationships
    (1, 1, True, 3)
    """
    if max_entities < 0 or max_relationships < 0:
        raise ValueError("caps must be non-negative")
    ranks = importance(graph) if ranks is None else ranks
    kept = entity_order(graph, ranks)[:max_entities]
    kept_set = set(kept)
    edges = relationship_order(graph, ranks, kept_set)[:max_relationships]
    total_e, total_r = graph.number_of_nodes(), graph.number_of_edges()
    return CappedGraph(
        vendor=graph.graph.get("vendor", ""),
        entities=tuple(entity(graph, n, round(ranks.get(n, 0.0), 6)) for n in kept),
        relationships=tuple(relationship(graph, u, v, k) for u, v, k in edges),
        truncated=len(kept) < total_e or len(edges) < total_r,
        total_entities=total_e,
        total_relationships=total_r,
        max_entities=max_entities,
        max_relationships=max_relationships,
    )


def preview(graph: nx.MultiDiGraph, ranks: dict[int, float] | None = None) -> CappedGraph:
    """The top 5 entities, and the top 5 relationships touching them by the same
    rule: typed ones between two of the five, then typed ones touching one of them,
    and co-occurrence only after every typed one.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": f"e{i}", "type": "ORG", "confidence": 1.0, "mention_count": 1}
    ...      for i in range(1, 9)],
    ...     [{"id": 10 + i, "source_id": 1, "target_id": i, "type": "PARTNERS_WITH",
    ...       "confidence": 0.5} for i in range(2, 9)])
    >>> p = preview(g)
    >>> len(p.entities), len(p.relationships), p.entities[0].id, p.truncated
    (5, 5, 1, True)
    >>> {r.source_name for r in p.relationships}, len({r.target_name for r in p.relationships})
    ({'e1'}, 5)
    """
    ranks = importance(graph) if ranks is None else ranks
    top = entity_order(graph, ranks)[:PREVIEW_SIZE]
    top_set = set(top)
    inside = relationship_order(graph, ranks, top_set)
    touching = [
        e for e in relationship_order(graph, ranks) if (e[0] in top_set) != (e[1] in top_set)
    ]
    candidates = inside + touching
    weak = [graph.edges[e]["type"] in WEAK_TYPES for e in candidates]
    chosen = [e for e, w in zip(candidates, weak, strict=True) if not w]
    chosen += [e for e, w in zip(candidates, weak, strict=True) if w]
    chosen = chosen[:PREVIEW_SIZE]
    return CappedGraph(
        vendor=graph.graph.get("vendor", ""),
        entities=tuple(entity(graph, n, round(ranks.get(n, 0.0), 6)) for n in top),
        relationships=tuple(relationship(graph, u, v, k) for u, v, k in chosen),
        truncated=graph.number_of_nodes() > len(top) or graph.number_of_edges() > len(chosen),
        total_entities=graph.number_of_nodes(),
        total_relationships=graph.number_of_edges(),
        max_entities=PREVIEW_SIZE,
        max_relationships=PREVIEW_SIZE,
    )
