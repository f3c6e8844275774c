"""Vendor subgraphs as networkx graphs, built from entity and relationship rows.

A vendor graph is an ``nx.MultiDiGraph``: nodes are entity ids with the
attributes ``name, type, confidence, mention_count, snippet, aliases,
vendor_id, external``; edges are keyed by relationship id with ``type,
confidence, evidence, evidence_chunk_id, metadata``. Graph attributes:
``vendor_id, vendor, build_id, last_updated``. PostgreSQL is the source of
truth; these graphs are derived and disposable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import networkx as nx


@dataclass(frozen=True, slots=True)
class Entity:
    """One entity of a vendor graph. ``external``: it belongs to another vendor
    and is here because one of this vendor's relationships points at it."""

    id: int
    name: str
    type: str
    confidence: float
    mention_count: int
    snippet: str = ""
    aliases: tuple[str, ...] = ()
    vendor_id: int = 0
    external: bool = False
    importance: float = 0.0


@dataclass(frozen=True, slots=True)
class Relationship:
    """One typed, directed relationship with its evidence."""

    id: int
    source_id: int
    target_id: int
    type: str
    confidence: float
    evidence: str = ""
    evidence_chunk_id: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source_name: str = ""
    """The ends' names, so that a relationship reads alone where its ends are not
    listed beside it (the preview's relationships touching one of its entities)."""
    target_name: str = ""


def build_graph(
    vendor_id: int,
    vendor: str,
    entity_rows: Iterable[Mapping[str, Any]],
    relationship_rows: Iterable[Mapping[str, Any]],
    *,
    build_id: int = 0,
    last_updated: datetime | None = None,
) -> nx.MultiDiGraph:
    """A vendor's graph from ``kg_vendor_entities`` / ``kg_vendor_relationships`` rows.

    Relationships whose ends are not among the entity rows are left out: the
    loading query returns every endpoint, so that only happens with rows
    deleted between the two queries.

    Examples
    --------
    >>> g = build_graph(
    ...     1,
    ...     "Acme",
    ...     [
    ...         {"id": 1, "name": "Acme", "type": "ORG", "confidence": 1.0, "mention_count": 3},
    ...         {"id": 2, "name": "Rocket", "type": "PRODUCT", "confidence": 0.9,
    ...          "mention_count": 1},
    ...     ],
    ...     [{"id": 7, "source_id": 1, "target_id": 2, "type": "PRODUCES", "confidence": 0.8}],
    ... )
    >>> g.number_of_nodes(), g.number_of_edges(), g.edges[1, 2, 7]["type"]
    (2, 1, 'PRODUCES')
    """
    graph = nx.MultiDiGraph(
        vendor_id=vendor_id, vendor=vendor, build_id=build_id, last_updated=last_updated
    )
    for row in entity_rows:
        graph.add_node(
            int(row["id"]),
            name=row["name"],
            type=row["type"],
            confidence=float(row["confidence"]),
            mention_count=int(row["mention_count"]),
            snippet=row.get("snippet") or "",
            aliases=tuple(row.get("aliases") or ()),
            vendor_id=int(row.get("vendor_id", vendor_id)),
            external=bool(row.get("external", False)),
        )
    for row in relationship_rows:
        source, target = int(row["source_id"]), int(row["target_id"])
        if source not in graph or target not in graph:
            continue
        graph.add_edge(
            source,
            target,
            key=int(row["id"]),
            type=row["type"],
            confidence=float(row["confidence"]),
            evidence=row.get("evidence_sentence") or "",
            evidence_chunk_id=row.get("evidence_chunk_id"),
            metadata=dict(row.get("metadata") or {}),
        )
    return graph


def entity(graph: nx.MultiDiGraph, node: int, importance: float = 0.0) -> Entity:
    """The :class:`Entity` of a node."""
    return entity_from_row({"id": node, **graph.nodes[node]}, importance)


def relationship(graph: nx.MultiDiGraph, source: int, target: int, key: int) -> Relationship:
    """The :class:`Relationship` of an edge."""
    a = graph.edges[source, target, key]
    ends = {"id": key, "source_id": source, "target_id": target}
    r = relationship_from_row({**a, **ends, "evidence_sentence": a["evidence"]})
    return replace(
        r,
        source_name=graph.nodes[source].get("name", ""),
        target_name=graph.nodes[target].get("name", ""),
    )


def entity_from_row(row: Mapping[str, Any], importance: float = 0.0) -> Entity:
    """The :class:`Entity` of a ``kg_entities_by_id`` row."""
    return Entity(
        id=int(row["id"]),
        name=row["name"],
        type=row["type"],
        confidence=float(row["confidence"]),
        mention_count=int(row["mention_count"]),
        snippet=row.get("snippet") or "",
        aliases=tuple(row.get("aliases") or ()),
        vendor_id=int(row.get("vendor_id", 0)),
        external=bool(row.get("external", False)),
        importance=importance,
    )


def relationship_from_row(row: Mapping[str, Any]) -> Relationship:
    """The :class:`Relationship` of a ``kg_relationships_by_id`` row."""
    return Relationship(
        id=int(row["id"]),
        source_id=int(row["source_id"]),
        target_id=int(row["target_id"]),
        type=row["type"],
        confidence=float(row["confidence"]),
        evidence=row.get("evidence_sentence") or "",
        evidence_chunk_id=row.get("evidence_chunk_id"),
        metadata=dict(row.get("metadata") or {}),
    )
