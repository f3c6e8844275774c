"""Graph questions over one vendor graph: entity look-up, shortest paths, neighbourhoods.

Adapted from peer graph tools (``find_path``, ``get_dependents``): entities are
found by id or by name, relationships are followed in either direction (a
path from a product to its maker is as useful as the reverse), and
``relationship_types`` restricts which relationships may be used.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import networkx as nx
from rapidfuzz import fuzz, process

from kg.disambiguate import clean_name
from kg.errors import EntityAmbiguous, EntityNotFound, InvalidGraphRequest
from kg.model import Entity, Relationship, entity, relationship
from sql.names import normalize_name

MAX_DEPTH = 5


def find_entity(graph: nx.MultiDiGraph, ref: int | str, entity_type: str | None = None) -> int:
    """The node of an entity given by id, or by name or alias (normalised match).

    Raises :class:`~kg.errors.EntityNotFound` (with suggestions) or
    :class:`~kg.errors.EntityAmbiguous` when one name has several types and
    ``entity_type`` does not choose.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": 1, "name": "Acme", "type": "ORG", "confidence": 1, "mention_count": 1},
    ...      {"id": 2, "name": "Wile E. Coyote", "type": "PERSON", "confidence": 1,
    ...       "mention_count": 1}], [])
    >>> find_entity(g, "wile e coyote"), find_entity(g, 1)
    (2, 1)
    """
    vendor = graph.graph.get("vendor", "")
    if isinstance(ref, bool) or not isinstance(ref, int | str):
        raise InvalidGraphRequest(f"An entity is given by id or name, not {type(ref).__name__}.")
    if isinstance(ref, int):
        if ref in graph:
            return ref
        raise EntityNotFound(str(ref), vendor)
    text = clean_name(ref, what="entity name")
    key = normalize_name(text) or text.casefold()
    wanted = entity_type.upper() if entity_type else None
    hits = [
        n
        for n, a in graph.nodes(data=True)
        if (wanted is None or a["type"] == wanted)
        and (
            normalize_name(a["name"]) == key
            or any(normalize_name(alias) == key for alias in a["aliases"])
        )
    ]
    if len(hits) == 1:
        return int(hits[0])
    if hits:
        own = [n for n in hits if not graph.nodes[n]["external"]]
        if len(own) == 1:
            return int(own[0])
        raise EntityAmbiguous(
            text, vendor, [f"{graph.nodes[n]['name']} ({graph.nodes[n]['type']})" for n in hits]
        )
    names = {n: graph.nodes[n]["name"] for n in graph}
    close = process.extract(text, names, scorer=fuzz.WRatio, limit=5, score_cutoff=60)
    raise EntityNotFound(text, vendor, [name for name, _, _ in close])


def _typed_view(
    graph: nx.MultiDiGraph, types: Collection[str] | None
) -> tuple[nx.Graph, set[str] | None]:
    """Undirected view keeping only relationships of ``types`` (all when None),
    and the wanted types upper-cased."""
    if types is None:
        return graph.to_undirected(as_view=True), None
    wanted = {t.upper() for t in types}
    unknown = wanted - {t for _, _, t in graph.edges(data="type")}
    if unknown and not wanted - unknown:
        present = sorted({t for _, _, t in graph.edges(data="type")})
        raise InvalidGraphRequest(
            f"No relationship of type {', '.join(sorted(unknown))} in this graph; "
            f"types present: {', '.join(present) or 'none'}."
        )
    view = nx.subgraph_view(
        graph, filter_edge=lambda u, v, k: graph.edges[u, v, k]["type"] in wanted
    )
    return view.to_undirected(as_view=True), wanted


@dataclass(frozen=True, slots=True)
class PathStep:
    """An entity on a path and the relationship that leads on to the next one
    (``forward``: stored from this entity to the next)."""

    entity: Entity
    relationship_to_next: Relationship | None
    forward: bool = True


@dataclass(frozen=True, slots=True)
class PathResult:
    path_exists: bool
    steps: tuple[PathStep, ...]
    hops: int
    reason: str = ""


def _best_edge(
    graph: nx.MultiDiGraph, u: int, v: int, types: set[str] | None
) -> tuple[Relationship, bool]:
    options = [(relationship(graph, u, v, k), True) for k in graph[u].get(v, {})]
    options += [(relationship(graph, v, u, k), False) for k in graph[v].get(u, {})]
    if types is not None:
        options = [o for o in options if o[0].type in types]
    return max(options, key=lambda o: (o[0].confidence, -o[0].id))


def shortest_path(
    graph: nx.MultiDiGraph,
    source: int,
    target: int,
    *,
    max_hops: int = 6,
    relationship_types: Collection[str] | None = None,
) -> PathResult:
    """The shortest chain of relationships linking two entities, at most ``max_hops`` long.

    Between two entities on the path the most confident relationship is shown.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": f"e{i}", "type": "ORG", "confidence": 1, "mention_count": 1}
    ...      for i in (1, 2, 3)],
    ...     [{"id": 7, "source_id": 1, "target_id": 2, "type": "PARTNERS_WITH", "confidence": 0.9},
    ...      {"id": 8, "source_id": 3, "target_id": 2, "type": "ACQUIRED", "confidence": 0.8}])
    >>> r = shortest_path(g, 1, 3)
    >>> r.hops, [s.entity.id for s in r.steps], r.steps[1].forward
    (2, [1, 2, 3], False)
    >>> shortest_path(g, 1, 3, max_hops=1).path_exists
    False
    """
    if not 1 <= max_hops <= 20:
        raise InvalidGraphRequest(f"max_hops must be from 1 to 20, not {max_hops}.")
    view, types = _typed_view(graph, relationship_types)
    if source == target:
        return PathResult(True, (PathStep(entity(graph, source), None),), 0)
    try:
        nodes = nx.bidirectional_shortest_path(view, source, target)
    except nx.NetworkXNoPath:
        return PathResult(False, (), 0, "the two entities are not connected")
    hops = len(nodes) - 1
    if hops > max_hops:
        return PathResult(
            False, (), 0, f"the shortest path has {hops} hops, over max_hops={max_hops}"
        )
    steps = []
    for i, node in enumerate(nodes):
        if i + 1 < len(nodes):
            rel, forward = _best_edge(graph, node, nodes[i + 1], types)
            steps.append(PathStep(entity(graph, node), rel, forward))
        else:
            steps.append(PathStep(entity(graph, node), None))
    return PathResult(True, tuple(steps), hops)


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """Entities within ``depth`` relationships of ``center`` (with their distance)
    and the relationships among them."""

    center: Entity
    depth: int
    entities: tuple[tuple[Entity, int], ...]
    relationships: tuple[Relationship, ...]
    truncated: bool


def neighbourhood(
    graph: nx.MultiDiGraph,
    center: int,
    *,
    depth: int = 1,
    relationship_types: Collection[str] | None = None,
    limit: int = 100,
) -> Neighbourhood:
    """An entity's neighbourhood to ``depth`` hops, closest and most confident first.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": i, "name": f"e{i}", "type": "ORG", "confidence": 1, "mention_count": 1}
    ...      for i in (1, 2, 3)],
    ...     [{"id": 7, "source_id": 1, "target_id": 2, "type": "PARTNERS_WITH", "confidence": 0.9},
    ...      {"id": 8, "source_id": 3, "target_id": 2, "type": "ACQUIRED", "confidence": 0.8}])
    >>> n = neighbourhood(g, 1, depth=2)
    >>> [(e.id, d) for e, d in n.entities], len(n.relationships)
    ([(2, 1), (3, 2)], 2)
    >>> [(e.id, d) for e, d in neighbourhood(g, 2, relationship_types=["ACQUIRED"]).entities]
    [(3, 1)]
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidGraphRequest(f"depth must be from 1 to {MAX_DEPTH}, not {depth}.")
    if not 1 <= limit <= 1000:
        raise InvalidGraphRequest(f"limit must be from 1 to 1000, not {limit}.")
    view, types = _typed_view(graph, relationship_types)
    distance = nx.single_source_shortest_path_length(view, center, cutoff=depth)
    others = sorted(
        (n for n in distance if n != center),
        key=lambda n: (
            distance[n],
            -graph.nodes[n]["confidence"],
            -graph.nodes[n]["mention_count"],
            n,
        ),
    )
    kept = others[:limit]
    members = {center, *kept}
    rels = [
        relationship(graph, u, v, k)
        for u, v, k, t in graph.edges(keys=True, data="type")
        if u in members and v in members and (types is None or t in types)
    ]
    rels.sort(key=lambda r: (-r.confidence, r.id))
    return Neighbourhood(
        center=entity(graph, center),
        depth=depth,
        entities=tuple((entity(graph, n), distance[n]) for n in kept),
        relationships=tuple(rels),
        truncated=len(kept) < len(others),
    )
