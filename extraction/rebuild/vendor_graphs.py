"""Rebuilding vendor graphs inside the publish transaction, many vendors per statement.

A full rebuild of the shared vendor corpus rebuilds 585 vendor graphs. Read and
written one vendor at a time that was about nine statements and three ``COPY``
operations a vendor, over 5,000 round trips to PostgreSQL; here the vendors are
taken :data:`VENDORS_PER_BATCH` at a time: their folder names, chunk extractions
and notes in three queries, their old graphs deleted in one statement, entity ids
allocated in one, and the new graphs written by three ``COPY`` operations. Each
vendor's graph is built exactly as before (:func:`extraction.graph.build.build_vendor_graph`
on that vendor's rows, in the same order) and entity ids are allocated in vendor
order, so the tables are the same row for row as one vendor at a time gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from extraction.graph.build import build_vendor_graph
from extraction.graph.gazetteer import Gazetteer
from extraction.graph.model import GraphProblem, VendorChunkExtraction, VendorGraph
from extraction.graph.note_edges import VendorNote
from extraction.notes.structure import NoteFacts
from extraction.rebuild.codec import result_from_json
from sql import queries

#: Vendors whose rows are read and written together: bounds the extraction results
#: held in memory at once (the largest vendor of the shared corpus has 1,075 notes).
VENDORS_PER_BATCH = 100

Conn = psycopg.Connection[dict[str, Any]]


def rebuild_vendor_graphs(
    conn: Conn, vendor_ids: Sequence[int], gazetteer: Gazetteer
) -> list[GraphProblem]:
    """Rebuild the graphs of ``vendor_ids`` (in id order); what their notes hold that a
    user should know. A vendor with no note left is skipped: its row is deleted after."""
    problems: list[GraphProblem] = []
    ordered = sorted(set(vendor_ids))
    for first in range(0, len(ordered), VENDORS_PER_BATCH):
        problems += _rebuild_batch(conn, ordered[first : first + VENDORS_PER_BATCH], gazetteer)
    return problems


def _grouped(conn: Conn, query: str, vendor_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The rows of ``query`` for ``vendor_ids``, by their ``vendor_id``, in query order."""
    out: dict[int, list[dict[str, Any]]] = {}
    for r in conn.execute(query, {"vendor_ids": vendor_ids}):
        out.setdefault(int(r["vendor_id"]), []).append(r)
    return out


def _rebuild_batch(conn: Conn, vendor_ids: list[int], gazetteer: Gazetteer) -> list[GraphProblem]:
    q = queries()
    names = _grouped(conn, q["vendors_folder_names"], vendor_ids)
    extractions = _grouped(conn, q["vendors_extractions"], vendor_ids)
    notes = _grouped(conn, q["vendors_notes"], vendor_ids)
    graphs: list[tuple[int, list[str], VendorGraph]] = []
    for vendor_id in vendor_ids:
        if vendor_id not in names:
            continue  # every document gone: the vendor row is deleted after this
        display = [r["name"] for r in names[vendor_id] if r["name"]]
        rows = [
            VendorChunkExtraction(
                chunk_id=int(r["chunk_id"]),
                body_offset=int(r["header_chars"]) + 2 if r["header_chars"] else 0,
                overlap_chars=int(r["overlap_chars"]),
                result=result_from_json(r["result"]),
                content=r["content"],
                path=r["source_path"],
            )
            for r in extractions.get(vendor_id, [])
        ]
        vendor_notes = [
            VendorNote(
                path=r["source_path"],
                facts=NoteFacts.from_json(r["facts"]),
                chunk_id=int(r["chunk_id"]),
                content=r["content"],
            )
            for r in notes.get(vendor_id, [])
        ]
        graph = build_vendor_graph(
            rows,
            notes=vendor_notes,
            gazetteer=gazetteer,
            vendor=display[0] if display else None,
            vendor_aliases=display[1:],
        )
        graphs.append((vendor_id, display, graph))
    if not graphs:
        return []
    conn.execute(q["delete_vendors_graphs"], {"vendor_ids": [v for v, _, _ in graphs]})
    total = sum(len(g.entities) for _, _, g in graphs)
    allocated = [int(r["id"]) for r in conn.execute(q["allocate_entity_ids"], {"n": total})]
    first = 0
    ids: list[list[int]] = []
    for _, _, graph in graphs:
        ids.append(allocated[first : first + len(graph.entities)])
        first += len(graph.entities)
    _write(conn, graphs, ids)
    conn.cursor().executemany(
        q["refresh_vendor"],
        [
            {"vendor_id": vendor_id, "name": display[0], "aliases": display[1:]}
            for vendor_id, display, _ in graphs
        ],
    )
    return [p for _, _, graph in graphs for p in graph.problems]


def _write(
    conn: Conn, graphs: list[tuple[int, list[str], VendorGraph]], ids: list[list[int]]
) -> None:
    """The entities, mentions and relationships of ``graphs`` (entity ``i`` of graph
    ``g`` has id ``ids[g][i]``), in three ``COPY`` operations."""
    q = queries()
    with conn.cursor().copy(q["copy_entities"]) as copy:
        copy.set_types(["int8", "int8", "text", "text", "text", "text[]", "float4", "int4", "text"])
        for (vendor_id, _, graph), entity_ids in zip(graphs, ids, strict=True):
            for entity_id, e in zip(entity_ids, graph.entities, strict=True):
                copy.write_row(
                    (
                        entity_id,
                        vendor_id,
                        e.name,
                        e.normalized_name,
                        e.type,
                        list(e.aliases),
                        e.confidence,
                        e.mention_count,
                        e.snippet,
                    )
                )
    with conn.cursor().copy(q["copy_entity_mentions"]) as copy:
        copy.set_types(["int8", "int8", "int4", "int4", "text"])
        for (_, _, graph), entity_ids in zip(graphs, ids, strict=True):
            for m in graph.mentions:
                copy.write_row((entity_ids[m.entity], m.chunk_id, m.start, m.end, m.text))
    with conn.cursor().copy(q["copy_relationships"]) as copy:
        copy.set_types(["int8", "int8", "int8", "text", "float4", "int8", "text", "jsonb"])
        for (vendor_id, _, graph), entity_ids in zip(graphs, ids, strict=True):
            for rel in graph.relationships:
                copy.write_row(
                    (
                        vendor_id,
                        entity_ids[rel.source],
                        entity_ids[rel.target],
                        rel.type,
                        rel.confidence,
                        rel.evidence_chunk_id,
                        rel.evidence_sentence,
                        Jsonb(rel.metadata),
                    )
                )
