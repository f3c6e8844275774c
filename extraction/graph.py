"""One vendor's graph from its chunks' extraction results (pure, no database).

Mentions are resolved to entities (one per canonical name and type), relation
mentions are aggregated to one edge per (source, target, type), and every
edge keeps the evidence sentence and chunk it came from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extraction.models import EntityMention, ExtractionResult
from extraction.names import MAX_NAME_CHARS, normalize_name
from extraction.resolve import resolve_entities

#: How sure a single mention makes us that the entity exists, by who found it.
#: Seeds come from the note's own metadata; the statistical model is noisier.
MENTION_CONFIDENCE = {"ruler": 0.9, "ner": 0.6}
MAX_CONFIDENCE = 0.99
SNIPPET_CHARS = 160


@dataclass(frozen=True, slots=True)
class VendorChunkExtraction:
    """A stored chunk's extraction result with what is needed to place its spans."""

    chunk_id: int
    body_offset: int
    """Where the chunk's text starts in its stored content (after the header)."""
    overlap_chars: int
    """Mentions starting inside the repeated overlap belong to the previous chunk."""
    result: ExtractionResult
    content: str = ""


@dataclass(frozen=True, slots=True)
class GraphEntity:
    name: str
    normalized_name: str
    type: str
    aliases: tuple[str, ...]
    confidence: float
    mention_count: int
    snippet: str


@dataclass(frozen=True, slots=True)
class GraphMention:
    entity: int
    """Index into :attr:`VendorGraph.entities`."""
    chunk_id: int
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class GraphRelationship:
    source: int
    target: int
    type: str
    confidence: float
    evidence_chunk_id: int
    evidence_sentence: str
    metadata: dict[str, Any]


@dataclass(slots=True)
class VendorGraph:
    entities: list[GraphEntity] = field(default_factory=list)
    mentions: list[GraphMention] = field(default_factory=list)
    relationships: list[GraphRelationship] = field(default_factory=list)


def _noisy_or(confidences: Sequence[float]) -> float:
    remaining = 1.0
    for c in confidences:
        remaining *= 1.0 - c
    return round(min(MAX_CONFIDENCE, 1.0 - remaining), 4)


def _snippet(content: str, start: int, end: int) -> str:
    if not content:
        return ""
    half = max(0, (SNIPPET_CHARS - (end - start)) // 2)
    lo, hi = max(0, start - half), min(len(content), end + half)
    text = " ".join(content[lo:hi].split())
    return ("…" if lo > 0 else "") + text + ("…" if hi < len(content) else "")


def _is_name(text: str) -> bool:
    return len(text) <= MAX_NAME_CHARS


def build_vendor_graph(rows: Sequence[VendorChunkExtraction]) -> VendorGraph:
    """Resolve and aggregate one vendor's extraction results.

    Mentions that start inside a chunk's overlap with its predecessor are
    skipped (the predecessor already counted them), and so are relations whose
    both ends lie there. Mentions and relations with a name over
    :data:`~extraction.names.MAX_NAME_CHARS` are token soup, not names: dropped.
    """
    kept: list[tuple[VendorChunkExtraction, EntityMention]] = []
    for row in rows:
        for m in row.result.entities:
            if m.start >= row.overlap_chars and _is_name(m.text) and _is_name(m.canonical):
                kept.append((row, m))
    resolution = resolve_entities([m for _, m in kept])

    graph = VendorGraph()
    confidences: list[list[float]] = [[] for _ in resolution.entities]
    first_seen: list[tuple[VendorChunkExtraction, EntityMention] | None] = [
        None for _ in resolution.entities
    ]
    for (row, m), entity_index in zip(kept, resolution.mention_entity, strict=True):
        confidences[entity_index].append(MENTION_CONFIDENCE.get(m.source, 0.6))
        if first_seen[entity_index] is None:
            first_seen[entity_index] = (row, m)
        graph.mentions.append(
            GraphMention(
                entity=entity_index,
                chunk_id=row.chunk_id,
                start=row.body_offset + m.start,
                end=row.body_offset + m.end,
                text=m.text,
            )
        )
    extra: list[GraphEntity] = []
    extra_index: dict[tuple[str, str], int] = {}

    def entity_for(name: str, label: str) -> int:
        found = resolution.by_key.get((label, normalize_name(name)))
        if found is not None:
            return found
        # An endpoint the NER did not tag as a mention (e.g. a resolved pronoun):
        # keep it, evidenced by the relation sentence only.
        key = (normalize_name(name), label)
        if key not in extra_index:
            extra_index[key] = len(resolution.entities) + len(extra)
            extra.append(
                GraphEntity(
                    name=name,
                    normalized_name=key[0],
                    type=label,
                    aliases=(),
                    confidence=0.5,
                    mention_count=0,
                    snippet="",
                )
            )
        return extra_index[key]

    edges: dict[tuple[int, int, str], list[tuple[float, int, str, str]]] = {}
    for row in rows:
        for r in row.result.relations:
            if r.source_span[0] < row.overlap_chars and r.target_span[0] < row.overlap_chars:
                continue
            if not (_is_name(r.source) and _is_name(r.target)):
                continue
            s = entity_for(r.source, r.source_label)
            t = entity_for(r.target, r.target_label)
            if s == t:
                continue
            edges.setdefault((s, t, r.type), []).append(
                (r.confidence, row.chunk_id, r.sentence, r.method)
            )

    for i, e in enumerate(resolution.entities):
        seen = first_seen[i]
        snippet = (
            _snippet(
                seen[0].content,
                seen[0].body_offset + seen[1].start,
                seen[0].body_offset + seen[1].end,
            )
            if seen
            else ""
        )
        graph.entities.append(
            GraphEntity(
                name=e.canonical,
                normalized_name=e.key,
                type=e.type,
                aliases=tuple(a for a in e.aliases if a != e.canonical),
                confidence=_noisy_or(confidences[i]),
                mention_count=len(confidences[i]),
                snippet=snippet,
            )
        )
    graph.entities.extend(extra)

    for (s, t, rel_type), evidence in sorted(edges.items()):
        best = max(evidence, key=lambda ev: (ev[0], -ev[1]))
        graph.relationships.append(
            GraphRelationship(
                source=s,
                target=t,
                type=rel_type,
                # The strongest single piece of evidence, not a sum: repeated weak
                # co-occurrence must not turn into a confident fact.
                confidence=round(best[0], 4),
                evidence_chunk_id=best[1],
                evidence_sentence=best[2][:2000],
                metadata={
                    "mentions": len(evidence),
                    "methods": dict(Counter(ev[3] for ev in evidence)),
                },
            )
        )
    return graph
