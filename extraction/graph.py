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
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from extraction.gazetteer import Gazetteer
from extraction.lexicon import is_version_like, is_vocabulary
from extraction.models import EntityMention, ExtractionResult
from extraction.names import MAX_NAME_CHARS, guess_vendor_type, has_org_word, normalize_name
from extraction.resolve import resolve_entities
from extraction.structure import NoteFacts

#: Bump when the graph built from the same extraction results changes: the next
#: rebuild then builds every vendor's graph again, without extracting anything.
GRAPH_VERSION = "13"

#: How sure a single mention makes us that the entity exists, by who found it.
#: Front matter and seeds come from the notes' own metadata; the model is noisier.
MENTION_CONFIDENCE = {"front_matter": 0.95, "ruler": 0.9, "compound": 0.8, "list": 0.7, "ner": 0.6}
#: How much a mention's type counts in the vote for an entity's type.
TYPE_WEIGHT = {"front_matter": 5, "ruler": 2, "compound": 2, "list": 2, "ner": 1}
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
#: Confidence of the facts the notes' structure states.
STRUCTURE_CONFIDENCE = {
    "created_by": 0.95,
    "identifiers": 0.75,
    "title_and_tags": 0.75,
    "title": 0.6,
    "related": 0.6,
}

#: Words that make an owner's name followed by them a product ("Atlassian Cloud").
_PRODUCT_WORDS = frozenset(
    """
    cloud data center server platform online edition studio suite app apps api sdk engine
    runtime store services service hub desktop mobile web connect cli
    """.split()  # noqa: SIM905
)
_LIST = re.compile(r",\s+(?!(?:Inc|Ltd|LLC|Co|Corp|GmbH|AG|SA|S\.A|BV|NV|PLC|LP|LLP)\b)[A-Z]")
#: The end of a structural relationship that is the vendor itself.
_VENDOR = "\x00vendor"
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
#: Words after a product's name that still name the product ("Ansible Releases").
_RELEASE_WORDS = frozenset(
    [
        "releases",
        "release",
        "versions",
        "version",
        "support",
        "lts",
        "release notes",
        "changelog",
        "docs",
        "documentation",
        "lifecycle",
        "end of life",
    ]
)
_COMPOUND_TAIL = re.compile(r"-(?:based|compatible|like|powered|specific|native)$")
_VOCABULARY_TAIL = re.compile(r"^(.+?)\s+(\w+(?:\s\w+)?)$")
_VERSION_TAIL = re.compile(r"^(.+?)\s+(v?\d[\w.+-]*)$")


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
class VendorNote:
    """A note of the vendor: its structural facts and where they point."""

    path: str
    facts: NoteFacts
    chunk_id: int
    """The note's first chunk: front-matter facts are evidenced there."""
    content: str = ""
    """That chunk's content (its header starts with the note's title)."""


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


@dataclass(frozen=True, slots=True)
class _Mention:
    chunk_id: int
    start: int
    end: int
    text: str
    name: str
    label: str
    source: str
    content: str
    offset: int


@dataclass(frozen=True, slots=True)
class _Edge:
    source: str
    source_label: str
    target: str
    target_label: str
    type: str
    confidence: float
    chunk_id: int
    sentence: str
    method: str


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
    tail = _VERSION_TAIL.match(text)
    return (
        0 < len(text) <= MAX_NAME_CHARS
        and bool(normalize_name(text))
        and not is_vocabulary(text)
        and not is_version_like(text)
        # "API v4": a version of vocabulary is vocabulary
        and not (tail is not None and is_vocabulary(tail.group(1)))
        # "Python, Ruby": a list, not a name ("Lutron Co., Inc." keeps its legal form)
        and not _LIST.search(text)
    )


def _release(name: str) -> bool:
    """A product name with a version after it ("RHEL 9"): a release, not another name."""
    tail = _VERSION_TAIL.match(name)
    return bool(tail) and is_version_like(tail.group(2))  # type: ignore[union-attr]


def _heading_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(1), m.end(1)) for m in _HEADING.finditer(text)]


def _key(name: str) -> str:
    return normalize_name(name) or name.strip().casefold()


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", _key(name))


class _Namer:
    """Canonical names and types, through the gazetteer and this vendor's names."""

    def __init__(self, gazetteer: Gazetteer | None) -> None:
        self.gazetteer = gazetteer
        self.products: dict[str, str] = {}

    def canonical(self, name: str, label: str) -> tuple[str, str, bool]:
        """(name, type, known) for a mention: the gazetteer's entry when it knows
        the name, or the product it names with a version, release words or a
        "-based" after it ("RHEL 9", "Ansible Releases", "Vuetify 2 docs")."""
        entry = self.gazetteer.lookup(name) if self.gazetteer is not None else None
        if entry is not None:
            return entry.name, entry.type, True
        base = name
        for _ in range(3):
            shorter = _strip_tail(base)
            if shorter is None:
                break
            base = shorter
            entry = self.gazetteer.lookup(base) if self.gazetteer is not None else None
            if entry is not None and entry.type == "PRODUCT":
                return entry.name, "PRODUCT", True
            if _key(base) in self.products:
                return self.products[_key(base)], "PRODUCT", True
        if base != name and _COMPOUND_TAIL.search(name):
            return base, label, False  # "Java EE-based" names Java EE
        return name, label, False


def _strip_tail(name: str) -> str | None:
    """``name`` without its last version, release word or "-based"; None if none."""
    if _COMPOUND_TAIL.search(name):
        return _COMPOUND_TAIL.sub("", name)
    tail = _VERSION_TAIL.match(name) or _VOCABULARY_TAIL.match(name)
    if tail and (is_version_like(tail.group(2)) or _key(tail.group(2)) in _RELEASE_WORDS):
        return tail.group(1)
    words = name.rsplit(" ", 1)
    if len(words) == 2 and _key(words[1]) in _RELEASE_WORDS:
        return words[0]
    return None


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
    namer = _Namer(gazetteer)
    raw: list[_Mention] = []
    for row in rows:
        if _release_table(row):
            continue  # rendered from the front matter's release data: cycles, not prose
        headings = _heading_spans(row.content[row.body_offset :]) if row.content else []
        for found in row.result.entities:
            if found.start < row.overlap_chars or not (
                _is_name(found.text) and _is_name(found.canonical)
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
                _Mention(
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
    structural: list[_Edge] = []
    vendor_name = vendor if vendor and not vendor.startswith("_") else None
    vendor_keys = {_key(v) for v in (vendor_name, *vendor_aliases) if v}
    vendor_squashed = {_squash(v) for v in (vendor_name, *vendor_aliases) if v}
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
        if n.facts.is_product and n.facts.subject and _key(n.facts.subject) in vendor_keys
    ]
    for note in notes:
        raw.extend(_note_mentions(note, namer))
        structural.extend(
            _note_edges(note, namer, vendor_name, vendor_type, vendor_keys, vendor_squashed)
        )
    mentions, settled, corpus_keys = _settle(
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
    first_seen: list[_Mention | None] = [None for _ in resolution.entities]
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
        if name == _VENDOR:
            return vendor_index
        name, label, _ = namer.canonical(name, label)
        name, label = settled.get(_key(name), (name, label))
        key = _key(name)
        found = by_key.get(key)
        if found is not None:
            return found
        if not _is_name(name) or name.islower():
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
        vendor_index = resolution.by_key.get((vendor_type, _key(vendor_name)))
        if vendor_index is None:
            vendor_index = len(resolution.entities) + len(extra)
            extra.append(GraphEntity(vendor_name, _key(vendor_name), vendor_type, (), 0.5, 0, ""))
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

    edges: dict[tuple[int, int, str], list[_Edge]] = {}
    for row in rows:
        if _release_table(row):
            continue
        for r in row.result.relations:
            if r.source_span[0] < row.overlap_chars and r.target_span[0] < row.overlap_chars:
                continue
            edge = _Edge(
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
                    sorted(a for a in aliases[i] if a != e.canonical and not _release(a))
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


def _settle(
    raw: Sequence[_Mention],
    namer: _Namer,
    vendor: str | None,
    vendor_type: str,
    vendor_keys: set[str],
) -> tuple[list[_Mention], dict[str, tuple[str, str]], set[str]]:
    """Each mention's final name and type, one per real thing.

    Names are first the corpus's (:class:`_Namer`); then spellings of one thing
    are joined: an abbreviation in parentheses after a name ("Extensible Markup
    Language (XML)"), and a product named with its owner in front ("HashiCorp
    Nomad" is "Nomad" when the vendor's notes name "Nomad" as a product). A group
    takes the corpus's name and type when the corpus knows one of its names, else
    its most frequent name and the type its mentions vote for; a name the model
    typed as an organisation but made of a product's or an owner's name and more
    words ("Windows Forms", "Microsoft Teams") is a product.

    Returns the mentions renamed, ``settled`` (every seen key -> final name and
    type, for relationship ends) and the keys the corpus decided.
    """
    for m in raw:
        if m.label == "PRODUCT":
            namer.products.setdefault(_key(m.name), m.name)
    named: list[_Mention] = []
    known: dict[str, str] = {}
    votes: dict[str, Counter[str]] = {}
    spelled: dict[str, Counter[str]] = {}
    for m in raw:
        name, label, is_known = namer.canonical(m.name, m.label)
        m = replace(m, name=name, label=label)
        named.append(m)
        key = _key(name)
        spelled.setdefault(key, Counter())[name] += 1
        if is_known:
            known[key] = label
        votes.setdefault(key, Counter())[label] += TYPE_WEIGHT.get(m.source, 1)
    if vendor is not None:
        known.setdefault(_key(vendor), vendor_type)
        spelled.setdefault(_key(vendor), Counter())[vendor] += 1
    parent = {k: k for k in spelled}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    ordered = sorted(named, key=lambda m: (m.chunk_id, m.start))
    for a, b in pairwise(ordered):
        if a.chunk_id != b.chunk_id or a.start == a.end or b.start == b.end:
            continue
        between, after = a.content[a.end : b.start], a.content[b.end : b.end + 1]
        if (
            between.strip() == "("
            and after == ")"
            and (_abbreviation(b.name, a.name) or _abbreviation(a.name, b.name))
        ):
            union(_key(a.name), _key(b.name))
    products = {k for k, c in votes.items() if known.get(k, c.most_common(1)[0][0]) == "PRODUCT"}
    owners = set(vendor_keys) | {
        k for k, c in votes.items() if known.get(k, c.most_common(1)[0][0]) in ("ORG", "PERSON")
    }
    if namer.gazetteer is not None:
        for names in list(spelled.values()):
            for head in _heads(names.most_common(1)[0][0]):
                entry = namer.gazetteer.lookup(head)
                if entry is not None:
                    (products if entry.type == "PRODUCT" else owners).add(_key(head))
    shortened: dict[str, str] = {}
    for key in spelled:
        words = key.split()
        for cut in range(2, len(words)):
            # "vs code" for "visual studio code"
            shortened.setdefault(
                "".join(w[0] for w in words[:cut]) + " " + " ".join(words[cut:]), key
            )
    for key in list(spelled):
        if key in shortened and shortened[key] != key:
            union(shortened[key], key)
        words = key.split()
        if len(words) > 1 and len(words[-1]) > 3 and key.endswith("s"):
            # "IBM Semeru Runtimes" in the prose of the note titled "IBM Semeru Runtime"
            single = key[:-1]
            if single in spelled and single in products:
                union(single, key)
        words = key.split()
        for cut in range(1, len(words)):
            head, rest = " ".join(words[:cut]), " ".join(words[cut:])
            # "hashicorp nomad" and "nomad", "jetbrains mps" and "mps": one product
            if head in owners and rest in spelled and (rest in products or key in products):
                union(key, rest)
    groups: dict[str, list[str]] = {}
    for key in spelled:
        groups.setdefault(find(key), []).append(key)
    settled: dict[str, tuple[str, str]] = {}
    corpus_keys: set[str] = set()
    for members in groups.values():
        declared = [k for k in members if k in known]
        if declared:
            # the corpus's own name: the owner's full form of a product first
            best = max(declared, key=lambda k: (len(k.split()), sum(spelled[k].values()), k))
            type_ = known[best]
            corpus_keys.update(members)
        else:
            best = max(members, key=lambda k: (sum(spelled[k].values()), len(k), k))
            total: Counter[str] = Counter()
            for k in members:
                total.update(votes.get(k, Counter()))
            type_ = max(total, key=lambda t: (total[t], t)) if total else "ORG"
            if type_ != "PRODUCT" and _named_after(best, products, owners):
                type_ = "PRODUCT"
            elif type_ == "PERSON" and has_org_word(best):
                type_ = "ORG"  # "Container Platform" is nobody's name
        name = spelled[best].most_common(1)[0][0]
        for k in members:
            settled[k] = (name, type_)
    mentions = [
        replace(m, name=settled[_key(m.name)][0], label=settled[_key(m.name)][1]) for m in named
    ]
    return mentions, settled, corpus_keys


def _heads(key: str) -> list[str]:
    words = key.split()
    return [" ".join(words[:cut]) for cut in range(1, len(words))]


def _abbreviation(short: str, full: str) -> bool:
    """``short`` reads as an abbreviation of ``full`` ("XML", "RHEL", "MPS")."""
    return (
        " " not in short.strip()
        and 2 <= len(short) <= 10
        and sum(c.isupper() for c in short) >= 2
        and len(full.split()) >= 2
    )


def _named_after(key: str, products: set[str], owners: set[str]) -> bool:
    """A product's name with more words after it ("java virtual machine", "jira
    software cloud"), or an owner's with product words or no organisation word
    after it ("microsoft teams", "atlassian cloud"; not "google research")."""
    words = key.split()
    for cut in range(1, len(words)):
        head, rest = " ".join(words[:cut]), " ".join(words[cut:])
        if head in products:
            return True
        if head in owners and (set(rest.split()) & _PRODUCT_WORDS or not has_org_word(rest)):
            return True
    return False


def _add_edge(
    edges: dict[tuple[int, int, str], list[_Edge]],
    edge: _Edge,
    entity_for: Any,
) -> None:
    if not ((edge.source == _VENDOR or _is_name(edge.source)) and _is_name(edge.target)):
        return
    s = entity_for(edge.source, edge.source_label)
    t = entity_for(edge.target, edge.target_label)
    if s is None or t is None or s == t:
        return
    if edge.type in ("RELATED_TO", "PARTNERS_WITH", "COMPETES_WITH", "MENTIONED_WITH") and s > t:
        s, t = t, s  # symmetric: one edge per pair
    edges.setdefault((s, t, edge.type), []).append(edge)


def _note_mentions(note: VendorNote, namer: _Namer) -> list[_Mention]:
    """Entities the note's front matter names, evidenced by its first chunk: the
    subject (at the title that starts the chunk), its makers and related products."""
    facts = note.facts
    out: list[_Mention] = []

    def add(text: str, label: str, at_title: bool = False) -> None:
        if not _is_name(text):
            return
        end = len(text) if at_title and note.content.startswith(text) else 0
        out.append(
            _Mention(note.chunk_id, 0, end, text, text, label, "front_matter", note.content, 0)
        )

    if facts.subject and facts.is_product:
        add(facts.subject, "PRODUCT", at_title=True)
    for maker in facts.makers:
        add(maker.name, maker.type)
    if facts.subject and facts.is_product and namer.gazetteer is not None:
        for slug in facts.related:
            product = namer.gazetteer.product_for_slug(slug)
            if product:
                add(product, "PRODUCT")
    return out


def _note_edges(
    note: VendorNote,
    namer: _Namer,
    vendor: str | None,
    vendor_type: str,
    vendor_keys: set[str],
    vendor_squashed: set[str],
) -> list[_Edge]:
    """Relationships the note's structure states, with their provenance."""
    facts = note.facts
    if not (facts.subject and facts.is_product):
        return []
    subject = facts.subject
    out: list[_Edge] = []

    def edge(source: str, label: str, type_: str, target: str, how: str, said: str) -> None:
        out.append(
            _Edge(
                source,
                label,
                target,
                "PRODUCT",
                type_,
                STRUCTURE_CONFIDENCE[how],
                note.chunk_id,
                said,
                "front_matter" if how in ("created_by", "related") else how,
            )
        )

    makers = ", ".join(m.name for m in facts.makers)
    for maker in facts.makers:
        source = maker.name
        if _key(maker.name) == _key(subject):
            # "MongoDB" by "MongoDB Inc.": the maker is the vendor of that name, if any
            if _key(maker.name) not in vendor_keys:
                continue
            source = _VENDOR
        edge(source, maker.type, "PRODUCES", subject, "created_by", f"created_by: {makers}")
    if namer.gazetteer is not None:
        for slug in facts.related:
            product = namer.gazetteer.product_for_slug(slug)
            if product and _key(product) != _key(subject):
                edge(subject, "PRODUCT", "RELATED_TO", product, "related", f"related: {slug}")
    if vendor is None:
        return out
    if any(m and _key(m.name) in vendor_keys for m in facts.makers):
        return out  # created_by already names the vendor
    cpe = [v for v in facts.cpe_vendors if v in vendor_squashed]
    if cpe:
        said = f"identifiers: cpe vendor {cpe[0]}"
        edge(_VENDOR, vendor_type, "PRODUCES", subject, "identifiers", said)
    elif any(_key(subject).startswith(k + " ") for k in vendor_keys):
        # a tag naming the vendor backs the title up; alone it proves nothing (HeroDevs
        # tags the Vue and Node.js pages it sells support for)
        tagged = [t for t in facts.tags if _squash(t) in vendor_squashed]
        if tagged:
            said = f"title: {subject}; tags: {tagged[0]}"
            edge(_VENDOR, vendor_type, "PRODUCES", subject, "title_and_tags", said)
        else:
            edge(_VENDOR, vendor_type, "PRODUCES", subject, "title", f"title: {subject}")
    return out
