"""One vendor's graph from its chunks' extraction results and its notes' own
structure (pure, no database).

Mentions are resolved to entities, one per real thing: every spelling of a
name (case, punctuation, legal suffix, a short name the gazetteer knows, a
version after a product's name) is one entity, and its type is decided once,
from all its evidence: the corpus gazetteer first (a product title is a
product in every vendor's notes), else the vote of its mentions. Support-phase
and generic vocabulary, bare versions and section headings the model took for
names never become entities.

Relationships come from two sources, each with its provenance: the notes'
structure (``created_by`` makers produce the subject, ``related`` topics are
related to it, a CPE vendor or a title that names the vendor says who makes it)
and the prose (dependency patterns, :mod:`extraction.relations`). A typed
relationship must fit its types (a person does not produce a place, a product
is not founded by a product) and reach its type's confidence floor
(:data:`MIN_CONFIDENCE`); co-occurrence stays a weak MENTIONED_WITH, capped per
vendor. Every edge keeps the evidence sentence and chunk it came from, and the
chunks of its other evidence.

The module is long (about 510 lines) because resolution, typing and the relationship
filters read one vendor's mentions together; the name rules (:mod:`extraction.graph_names`)
and the notes' structure (:mod:`extraction.graph_notes`) already live apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from extraction.gazetteer import Gazetteer
from extraction.graph_names import (
    Namer,
    RawEdge,
    RawMention,
    is_name,
    is_release,
    name_key,
    settle_names,
    squashed_name,
)
from extraction.graph_notes import VENDOR, VendorNote, note_edges, note_mentions
from extraction.models import EntityMention, ExtractionResult
from extraction.names import guess_vendor_type, has_org_word
from extraction.resolve import resolve_entities

#: Bump when the graph built from the same extraction results changes (here, in
#: :mod:`extraction.graph_names` or in :mod:`extraction.graph_notes`): the next
#: rebuild then builds every vendor's graph again, without extracting anything.
GRAPH_VERSION = "13"

#: How sure a single mention makes us that the entity exists, by who found it.
#: Front matter and seeds come from the notes' own metadata; the model is noisier.
MENTION_CONFIDENCE = {"front_matter": 0.95, "ruler": 0.9, "compound": 0.8, "list": 0.7, "ner": 0.6}
MAX_CONFIDENCE = 0.99
SNIPPET_CHARS = 160
#: Chunk ids kept per relationship besides its strongest evidence.
MAX_EVIDENCE_CHUNKS = 20
#: Co-occurrence edges kept per vendor (the most repeated pairs): a weak signal.
MAX_COOCCURRENCE = 200

#: What each end of a typed relationship may be.
END_TYPES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "WORKS_FOR": (frozenset({"PERSON"}), frozenset({"ORG"})),
    "FOUNDED_BY": (frozenset({"ORG"}), frozenset({"PERSON"})),
    "LOCATED_IN": (frozenset({"ORG"}), frozenset({"LOCATION"})),
    "SUBSIDIARY_OF": (frozenset({"ORG"}), frozenset({"ORG"})),
    "ACQUIRED": (frozenset({"ORG"}), frozenset({"ORG", "PRODUCT"})),
    "PRODUCES": (frozenset({"ORG", "PERSON"}), frozenset({"PRODUCT"})),
    "PARTNERS_WITH": (frozenset({"ORG"}), frozenset({"ORG"})),
    "COMPETES_WITH": (frozenset({"ORG", "PRODUCT"}), frozenset({"ORG", "PRODUCT"})),
    "BASED_ON": (frozenset({"PRODUCT"}), frozenset({"PRODUCT"})),
    "RELATED_TO": (frozenset({"PRODUCT", "ORG"}), frozenset({"PRODUCT", "ORG"})),
}
#: A typed relationship from prose enters the graph only at this confidence or
#: more (measured on the labelled vendor folders, see docs/vendor-graph.md);
#: structural facts carry their own, higher confidence.
MIN_CONFIDENCE: dict[str, float] = {
    "WORKS_FOR": 0.4,
    "FOUNDED_BY": 0.4,
    "LOCATED_IN": 0.4,
    "SUBSIDIARY_OF": 0.4,
    "ACQUIRED": 0.4,
    "PRODUCES": 0.45,
    "PARTNERS_WITH": 0.4,
    "COMPETES_WITH": 0.4,
    "BASED_ON": 0.4,
    "RELATED_TO": 0.4,
}
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


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
    path: str = ""
    """The note the chunk belongs to (for problems worth reporting)."""


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


@dataclass(frozen=True, slots=True)
class GraphProblem:
    """Something about the notes a user should know, found while building the graph."""

    path: str
    kind: str
    message: str
    action: str


@dataclass(slots=True)
class VendorGraph:
    entities: list[GraphEntity] = field(default_factory=list)
    mentions: list[GraphMention] = field(default_factory=list)
    relationships: list[GraphRelationship] = field(default_factory=list)
    problems: list[GraphProblem] = field(default_factory=list)


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


def _heading_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(1), m.end(1)) for m in _HEADING.finditer(text)]


def build_vendor_graph(
    rows: Sequence[VendorChunkExtraction],
    *,
    notes: Sequence[VendorNote] = (),
    gazetteer: Gazetteer | None = None,
    vendor: str | None = None,
    vendor_aliases: Sequence[str] = (),
) -> VendorGraph:
    """Resolve and aggregate one vendor's extraction results and note facts.

    Mentions that start inside a chunk's overlap with its predecessor are
    skipped (the predecessor already counted them), and so are relations whose
    both ends lie there.
    """
    namer = Namer(gazetteer)
    raw: list[RawMention] = []
    for row in rows:
        if _release_table(row):
            continue  # rendered from the front matter's release data: cycles, not prose
        headings = _heading_spans(row.content[row.body_offset :]) if row.content else []
        for found in row.result.entities:
            if found.start < row.overlap_chars or not (
                is_name(found.text) and is_name(found.canonical)
            ):
                continue
            if found.source == "ner" and any(
                s <= found.start and found.end <= e and found.end - found.start >= e - s - 2
                for s, e in headings
            ):
                continue  # a whole section heading the model read as a name
            if found.text.islower() and (gazetteer is None or gazetteer.lookup(found.text) is None):
                continue  # names are capitalised; a lower-case word is a common noun
            raw.append(
                RawMention(
                    row.chunk_id,
                    row.body_offset + found.start,
                    row.body_offset + found.end,
                    found.text,
                    found.canonical,
                    found.label,
                    found.source,
                    row.content,
                    row.body_offset,
                )
            )
    structural: list[RawEdge] = []
    vendor_name = vendor if vendor and not vendor.startswith("_") else None
    vendor_keys = {name_key(v) for v in (vendor_name, *vendor_aliases) if v}
    vendor_squashed = {squashed_name(v) for v in (vendor_name, *vendor_aliases) if v}
    vendor_type = "ORG"
    if vendor_name is not None:
        entry = gazetteer.lookup(vendor_name) if gazetteer is not None else None
        declared = entry.type if entry and entry.type != "PRODUCT" else None
        vendor_type = declared or guess_vendor_type(vendor_name)
    # a note about a product named like its vendor (MongoDB by MongoDB Inc.): the
    # vendor and the product are two entities of one name
    clash = [
        n
        for n in notes
        if n.facts.is_product and n.facts.subject and name_key(n.facts.subject) in vendor_keys
    ]
    for note in notes:
        raw.extend(note_mentions(note, namer))
        structural.extend(
            note_edges(note, namer, vendor_name, vendor_type, vendor_keys, vendor_squashed)
        )
    mentions, settled, corpus_keys = settle_names(
        raw, namer, None if clash else vendor_name, vendor_type, vendor_keys
    )
    resolution = resolve_entities(
        (EntityMention(m.text, m.label, m.start, m.end, m.name, m.source) for m in mentions),
        # a name the corpus declares is its own entity, never a prefix of a longer one
        keep=frozenset(corpus_keys),
        by_canonical=True,
    )
    graph = VendorGraph()
    by_key: dict[str, int] = {}
    for (_, key), index in resolution.by_key.items():
        by_key.setdefault(key, index)
    confidences: list[list[float]] = [[] for _ in resolution.entities]
    # the snippet's mention: the first one in the text (front matter has no span)
    first_seen: list[RawMention | None] = [None for _ in resolution.entities]
    aliases: list[set[str]] = [set(e.aliases) for e in resolution.entities]
    seen_spans: set[tuple[int, int, int]] = set()
    for m, entity_index in zip(mentions, resolution.mention_entity, strict=True):
        confidences[entity_index].append(MENTION_CONFIDENCE.get(m.source, 0.6))
        shown = first_seen[entity_index]
        if shown is None or (shown.start == shown.end and m.start < m.end):
            first_seen[entity_index] = m
        if (entity_index, m.chunk_id, m.start) in seen_spans:
            continue
        seen_spans.add((entity_index, m.chunk_id, m.start))
        graph.mentions.append(GraphMention(entity_index, m.chunk_id, m.start, m.end, m.text))
    extra: list[GraphEntity] = []
    extra_index: dict[str, int] = {}

    def entity_for(name: str, label: str) -> int | None:
        if name == VENDOR:
            return vendor_index
        name, label, _ = namer.canonical(name, label)
        name, label = settled.get(name_key(name), (name, label))
        key = name_key(name)
        found = by_key.get(key)
        if found is not None:
            return found
        if not is_name(name) or name.islower():
            return None
        if label == "PERSON" and has_org_word(name):
            return None  # a guessed end ("Container Platform" of "OpenShift ...") is nobody
        if key not in extra_index:
            # an end no mention names (a resolved pronoun, the vendor): kept, with
            # its evidence the relationship's own
            extra_index[key] = len(resolution.entities) + len(extra)
            extra.append(GraphEntity(name, key, label, (), 0.5, 0, ""))
        return extra_index[key]

    vendor_index: int | None = None
    if vendor_name is not None and clash:
        vendor_index = resolution.by_key.get((vendor_type, name_key(vendor_name)))
        if vendor_index is None:
            vendor_index = len(resolution.entities) + len(extra)
            extra.append(
                GraphEntity(vendor_name, name_key(vendor_name), vendor_type, (), 0.5, 0, "")
            )
        graph.problems.extend(
            GraphProblem(
                n.path,
                "subject_is_vendor",
                f"the note's product {n.facts.subject!r} is named like its vendor",
                f"kept as two entities: the {vendor_type} and the PRODUCT it produces",
            )
            for n in clash
        )
    elif vendor_name is not None:
        vendor_index = entity_for(vendor_name, vendor_type)

    edges: dict[tuple[int, int, str], list[RawEdge]] = {}
    for row in rows:
        if _release_table(row):
            continue
        for r in row.result.relations:
            if r.source_span[0] < row.overlap_chars and r.target_span[0] < row.overlap_chars:
                continue
            edge = RawEdge(
                r.source,
                r.source_label,
                r.target,
                r.target_label,
                r.type,
                r.confidence,
                row.chunk_id,
                r.sentence,
                r.method,
            )
            _add_edge(edges, edge, entity_for)
    for edge in structural:
        _add_edge(edges, edge, entity_for)

    for i, e in enumerate(resolution.entities):
        seen = first_seen[i]
        snippet = _snippet(seen.content, seen.start, seen.end) if seen else ""
        graph.entities.append(
            GraphEntity(
                name=e.canonical,
                normalized_name=e.key,
                type=e.type,
                aliases=tuple(
                    sorted(a for a in aliases[i] if a != e.canonical and not is_release(a))
                ),
                confidence=_noisy_or(confidences[i]),
                mention_count=len(confidences[i]),
                snippet=snippet,
            )
        )
    graph.entities.extend(extra)
    if vendor_index is not None:
        # the vendor is in its own graph, with the names its folders give it
        own = graph.entities[vendor_index]
        names = {*own.aliases, *(a for a in vendor_aliases if a and a != own.name)}
        graph.entities[vendor_index] = replace(own, aliases=tuple(sorted(names)))
    types = [e.type for e in graph.entities]
    cooccurrence: list[GraphRelationship] = []
    for (s, t, rel_type), evidence in sorted(edges.items()):
        allowed = END_TYPES.get(rel_type)
        if allowed is not None and not (types[s] in allowed[0] and types[t] in allowed[1]):
            continue
        best = max(evidence, key=lambda ev: (ev.confidence, -ev.chunk_id))
        if allowed is not None and best.confidence < MIN_CONFIDENCE.get(rel_type, 0.0):
            continue
        chunks = sorted({ev.chunk_id for ev in evidence})[:MAX_EVIDENCE_CHUNKS]
        rel = GraphRelationship(
            source=s,
            target=t,
            type=rel_type,
            # The strongest single piece of evidence, not a sum: repeated weak
            # co-occurrence must not turn into a confident fact.
            confidence=round(best.confidence, 4),
            evidence_chunk_id=best.chunk_id,
            evidence_sentence=best.sentence[:2000],
            metadata={
                "mentions": len(evidence),
                "methods": dict(Counter(ev.method for ev in evidence)),
                "chunks": chunks,
            },
        )
        if allowed is None:
            cooccurrence.append(rel)
        else:
            graph.relationships.append(rel)
    graph.relationships, broken = _break_cycles(graph.relationships, "BASED_ON")
    entity_names = [e.name for e in graph.entities]
    chunk_note = {row.chunk_id: row.path for row in rows}
    graph.problems.extend(
        GraphProblem(
            chunk_note.get(r.evidence_chunk_id, ""),
            "circular_based_on",
            f"{entity_names[r.source]} BASED_ON {entity_names[r.target]} closes a circle",
            "the least supported relationship of the circle was left out",
        )
        for r in broken
    )
    # a name the small model guessed once, that nothing else supports, is more often a
    # capitalised phrase than an organisation, person, place or event: left out
    supported = {r.source for r in graph.relationships} | {r.target for r in graph.relationships}
    sources: list[set[str]] = [set() for _ in graph.entities]
    for m, entity_index in zip(mentions, resolution.mention_entity, strict=True):
        sources[entity_index].add(m.source)
    unsupported = {
        i
        for i, e in enumerate(graph.entities)
        if i < len(resolution.entities)
        and e.type != "PRODUCT"
        and e.mention_count == 1
        and sources[i] == {"ner"}
        and i not in supported
        and i != vendor_index
        and not has_org_word(e.name)
        # a person's name in full ("Hank Scorpio") is the model's safest guess
        and not (e.type == "PERSON" and guess_vendor_type(e.name) == "PERSON")
    }
    cooccurrence = [
        r for r in cooccurrence if r.source not in unsupported and r.target not in unsupported
    ]
    cooccurrence.sort(key=lambda r: (-r.metadata["mentions"], -r.confidence, r.source, r.target))
    graph.relationships.extend(cooccurrence[:MAX_COOCCURRENCE])
    return _without(graph, unsupported) if unsupported else graph


def _break_cycles(
    relationships: list[GraphRelationship], rel_type: str
) -> tuple[list[GraphRelationship], list[GraphRelationship]]:
    """The relationships without the weakest edge of every circle of ``rel_type``
    (a product cannot be built on itself), and the edges left out."""
    kept = list(relationships)
    dropped: list[GraphRelationship] = []
    while True:
        typed = [r for r in kept if r.type == rel_type]
        cycle = _find_cycle(typed)
        if not cycle:
            return kept, dropped
        weakest = min(cycle, key=lambda r: (r.confidence, r.metadata.get("mentions", 1), -r.source))
        kept.remove(weakest)
        dropped.append(weakest)


def _find_cycle(edges: list[GraphRelationship]) -> list[GraphRelationship]:
    out: dict[int, list[GraphRelationship]] = {}
    for r in edges:
        out.setdefault(r.source, []).append(r)
    state: dict[int, int] = {}  # 1 on the stack, 2 done
    path: list[GraphRelationship] = []

    def visit(node: int) -> list[GraphRelationship]:
        state[node] = 1
        for r in out.get(node, []):
            if state.get(r.target) == 1:
                starts = [i for i, p in enumerate(path) if p.source == r.target]
                return [*path[starts[0] if starts else len(path) :], r]
            if r.target not in state:
                path.append(r)
                found = visit(r.target)
                if found:
                    return found
                path.pop()
        state[node] = 2
        return []

    for node in sorted(out):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def _without(graph: VendorGraph, dropped: set[int]) -> VendorGraph:
    """The graph without the entities ``dropped`` (their mentions and edges with them)."""
    index: dict[int, int] = {}
    out = VendorGraph()
    for i, e in enumerate(graph.entities):
        if i not in dropped:
            index[i] = len(out.entities)
            out.entities.append(e)
    out.mentions = [replace(m, entity=index[m.entity]) for m in graph.mentions if m.entity in index]
    out.relationships = [
        replace(r, source=index[r.source], target=index[r.target])
        for r in graph.relationships
        if r.source in index and r.target in index
    ]
    out.problems = graph.problems
    return out


def _release_table(row: VendorChunkExtraction) -> bool:
    """A chunk of the "Releases" section the corpus reader renders from front matter."""
    header = row.content[: max(0, row.body_offset - 2)]
    return header == "Releases" or header.endswith(" > Releases")


def _add_edge(
    edges: dict[tuple[int, int, str], list[RawEdge]],
    edge: RawEdge,
    entity_for: Any,
) -> None:
    if not ((edge.source == VENDOR or is_name(edge.source)) and is_name(edge.target)):
        return
    s = entity_for(edge.source, edge.source_label)
    t = entity_for(edge.target, edge.target_label)
    if s is None or t is None or s == t:
        return
    if edge.type in ("RELATED_TO", "PARTNERS_WITH", "COMPETES_WITH", "MENTIONED_WITH") and s > t:
        s, t = t, s  # symmetric: one edge per pair
    edges.setdefault((s, t, edge.type), []).append(edge)
