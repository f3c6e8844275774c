"""Exports of any vendor (sub)graph: node-link JSON and GraphML.

GraphML holds scalar attributes only, so aliases become a ``"; "``-joined
string, metadata a JSON string and missing values an empty string.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import networkx as nx
import orjson

from kg.analysis import CappedGraph


def capped_subgraph(graph: nx.MultiDiGraph, cap: CappedGraph) -> nx.MultiDiGraph:
    """The graph restricted to a capped selection (its entities and relationships)."""
    sub = nx.MultiDiGraph(**graph.graph)
    for e in cap.entities:
        sub.add_node(e.id, **graph.nodes[e.id])
    for r in cap.relationships:
        sub.add_edge(
            r.source_id, r.target_id, key=r.id, **graph.edges[r.source_id, r.target_id, r.id]
        )
    return sub


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def to_node_link(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """Node-link data (``nodes``, ``edges``), JSON-ready.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": 1, "name": "Acme", "type": "ORG", "confidence": 1, "mention_count": 2}], [])
    >>> to_node_link(g)["nodes"][0]["name"]
    'Acme'
    """
    data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
    data["graph"] = {k: _plain(v) for k, v in data["graph"].items()}
    data["nodes"] = [{k: _plain(v) for k, v in n.items()} for n in data["nodes"]]
    data["edges"] = [{k: _plain(v) for k, v in e.items()} for e in data["edges"]]
    return data


def to_json(graph: nx.MultiDiGraph) -> bytes:
    """Node-link JSON bytes."""
    return orjson.dumps(to_node_link(graph), option=orjson.OPT_INDENT_2)


def _scalar(value: Any) -> str | int | float | bool:
    if value is None:
        return ""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return "; ".join(str(v) for v in value)
    return orjson.dumps(value).decode()


def to_graphml(graph: nx.MultiDiGraph) -> str:
    """GraphML text of the graph.

    >>> from kg.model import build_graph
    >>> g = build_graph(1, "Acme",
    ...     [{"id": 1, "name": "Acme", "type": "ORG", "confidence": 1, "mention_count": 2,
    ...       "aliases": ["ACME Inc"]}], [])
    >>> "ACME Inc" in to_graphml(g)
    True
    """
    plain = nx.MultiDiGraph(**{k: _scalar(v) for k, v in graph.graph.items()})
    for n, attrs in graph.nodes(data=True):
        plain.add_node(n, **{k: _scalar(v) for k, v in attrs.items()})
    for u, v, k, attrs in graph.edges(keys=True, data=True):
        plain.add_edge(u, v, key=k, **{a: _scalar(x) for a, x in attrs.items()})
    return "\n".join(nx.generate_graphml(plain)) + "\n"
