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
and the prose (dependency patterns, :mod:`extraction.nlp.relations`). A typed
relationship must fit its types (a person does not produce a place, a product
is not founded by a product) and reach its type's confidence floor
(:data:`MIN_CONFIDENCE`); co-occurrence stays a weak MENTIONED_WITH, capped per
vendor. Every edge keeps the evidence sentence and chunk it came from, and the
chunks of its other evidence.

The name rules (:mod:`extraction.graph.naming`), the notes' structure
(:mod:`extraction.graph.note_edges`) and the data (:mod:`extraction.graph.model`) live
apart; :func:`build_vendor_graph` runs its named passes in order.

The module is long (about 520 lines) because the passes of :func:`build_vendor_graph`
read one vendor's mentions together and share its entity table; the names, the notes'
structure, the data and the cycle breaking already live apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from extraction.graph.cycles import break_cycles
from extraction.graph.gazetteer import Gazetteer, rare_word, squashed_name
from extraction.graph.model import (
    GraphEntity,
    GraphMention,
    GraphProblem,
    GraphRelationship,
    VendorChunkExtraction,
    VendorGraph,
)
from extraction.graph.naming import (
    Namer,
    RawEdge,
    RawMention,
    is_release,
    name_key,
    settle_names,
    snippet,
)
from extraction.graph.note_edges import (
    VENDOR,
    VendorNote,
    component_edges,
    edition_edges,
    note_edges,
    note_mentions,
    related_without_note,
    slug_mentions,
)
from extraction.graph.resolve import Resolution, resolve_entities
from extraction.models import (
    NAMED_KIND_OWNED,
    PRODUCT_PAIR_RULES,
    EntityMention,
    RelationMention,
)
from extraction.names import display_form, guess_vendor_type, has_org_word
from extraction.notes.words import plural_noun

#: Bump when the graph built from the same extraction results changes (here, in
#: :mod:`extraction.graph.naming` or in :mod:`extraction.graph.note_edges`): the next
#: rebuild then builds every vendor's graph again, without extracting anything.
GRAPH_VERSION = "175"

#: How sure a single mention makes us that the entity exists, by who found it.
#: Front matter and seeds come from the notes' own metadata; the model is noisier.
MENTION_CONFIDENCE = {
    "front_matter": 0.95,
    "related_slug": 0.5,
    "ruler": 0.9,
    "compound": 0.8,
    "list": 0.7,
    "ner": 0.6,
}
MAX_CONFIDENCE = 0.99
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
    # an event's organiser "produces" it (its page's created_by: Game Off, a game jam)
    "PRODUCES": (frozenset({"ORG", "PERSON"}), frozenset({"PRODUCT", "EVENT"})),
    "PARTNERS_WITH": (frozenset({"ORG"}), frozenset({"ORG"})),
    "COMPETES_WITH": (frozenset({"ORG", "PRODUCT"}), frozenset({"ORG", "PRODUCT"})),
    "BASED_ON": (frozenset({"PRODUCT"}), frozenset({"PRODUCT"})),
    "RELATED_TO": (
        frozenset({"PRODUCT", "ORG", "EVENT"}),
        frozenset({"PRODUCT", "ORG", "EVENT"}),
    ),
    "SUPPORTS": (frozenset({"ORG", "PERSON"}), frozenset({"PRODUCT"})),
}
#: A typed relationship from prose enters the graph only at this confidence or
#: more (measured on the labelled vendor folders, see docs/building-the-graph.md);
#: structural facts carry their own, higher confidence. The four types the
#: KnowledgeNet-trained reader decides (WORKS_FOR, FOUNDED_BY, LOCATED_IN,
#: SUBSIDIARY_OF) enter at 0.5, the score from which it is calibrated to keep 0.7
#: precision: under it, on the vendor notes, it mostly read a product's maker and
#: workplace as a founding ("C ... designed by Dennis Ritchie at Bell Labs" gave "Bell
#: Labs FOUNDED_BY Dennis Ritchie"; all 8 such edges of the corpus were wrong).
MIN_CONFIDENCE: dict[str, float] = {
    "WORKS_FOR": 0.5,
    "FOUNDED_BY": 0.5,
    "LOCATED_IN": 0.5,
    "SUBSIDIARY_OF": 0.5,
    "ACQUIRED": 0.4,
    "PRODUCES": 0.45,
    "PARTNERS_WITH": 0.4,
    "COMPETES_WITH": 0.4,
    "BASED_ON": 0.4,
    "RELATED_TO": 0.4,
    "SUPPORTS": 0.4,
}
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def _noisy_or(confidences: Sequence[float]) -> float:
    remaining = 1.0
    for c in confidences:
        remaining *= 1.0 - c
    return round(min(MAX_CONFIDENCE, 1.0 - remaining), 4)


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

    Named passes, in order: the prose's mentions (:func:`_prose_mentions`) and the
    notes' own (:func:`note_mentions`, :func:`note_edges`); their names settled and
    resolved to one entity per real thing; the vendor placed in its own graph
    (:meth:`_Ends.place_vendor`); every relationship's ends found
    (:func:`_gather_edges`); the typed relationships that fit their types and
    confidence floors kept, co-occurrence apart (:func:`_kept_relationships`);
    circles of BASED_ON broken (:func:`~extraction.graph.cycles.break_cycles`);
    entities nothing supports left out (:func:`_unsupported`), with the weak
    co-occurrence edges capped.

    Mentions that start inside a chunk's overlap with its predecessor are
    skipped (the predecessor already counted them), and so are relations whose
    both ends lie there.
    """
    namer = Namer(gazetteer)
    prose = [row for row in rows if not _release_table(row)]
    me = _Vendor.of(vendor, vendor_aliases, gazetteer)
    clash = me.clashing(notes)
    raw = _one_word_people_as_products(_prose_mentions(prose, namer), namer, prose, notes)
    raw = _named_kinds_as_products(raw, namer, gazetteer)
    named = _products_by_note(raw, {row.chunk_id: row.path for row in prose})
    texts = _texts_by_note(prose)
    structural: list[RawEdge] = []
    for note in notes:
        raw.extend(note_mentions(note, namer))
        structural.extend(note_edges(note, namer, me.name, me.type, me.keys, me.squashed, me.names))
        unnamed = related_without_note(
            note, namer, named.get(note.path, {}), texts.get(note.path, "")
        )
        structural.extend(unnamed)
        raw.extend(slug_mentions(note, unnamed))
    # the products the vendor's notes are about, as their mentions are named (the
    # gazetteer names a title by its main name)
    subjects = frozenset(
        name_key(namer.canonical(n.facts.subject, "PRODUCT")[0])
        for n in notes
        if n.facts.subject and n.facts.is_product
    )
    mentions, settled, corpus_keys = settle_names(
        raw,
        namer,
        None if clash else me.name,
        me.type,
        me.keys | me.brand,
        me.variants,
        subjects,
    )
    structural.extend(edition_edges(mentions, namer))
    structural.extend(component_edges(mentions, namer))
    resolution = resolve_entities(
        (EntityMention(m.text, m.label, m.start, m.end, m.name, m.source) for m in mentions),
        # a name the corpus declares is its own entity, never a prefix of a longer one
        keep=frozenset(corpus_keys),
        by_canonical=True,
    )
    graph = VendorGraph()
    seen = _Seen.of(mentions, resolution, graph)
    ends = _Ends(namer, settled, resolution)
    ends.place_vendor(me, clash, graph)
    edges = _gather_edges(prose, structural, ends)
    graph.entities = seen.entities(resolution) + ends.extra
    if ends.vendor is not None:
        # the vendor is in its own graph, with the names its folders give it
        own = graph.entities[ends.vendor]
        names = {*own.aliases, *(a for a in me.aliases if a and a != own.name)}
        graph.entities[ends.vendor] = replace(own, aliases=tuple(sorted(names)))
    types = [e.type for e in graph.entities]
    typed, cooccurrence = _kept_relationships(_parts_of_products(edges, types), types)
    graph.relationships, broken = break_cycles(_makers_first(typed), "BASED_ON")
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
    if ends.vendor is not None:
        _vendor_stated_by_notes(graph, ends.vendor, structural)
    unsupported = _unsupported(graph, seen, len(resolution.entities), ends.vendor, gazetteer)
    cooccurrence = [
        r for r in cooccurrence if r.source not in unsupported and r.target not in unsupported
    ]
    cooccurrence.sort(key=lambda r: (-r.metadata["mentions"], -r.confidence, r.source, r.target))
    graph.relationships.extend(cooccurrence[:MAX_COOCCURRENCE])
    # an end a relationship named that no kept relationship holds any longer (its type
    # did not fit, its confidence was under the floor) is no entity of the graph
    linked = {r.source for r in graph.relationships} | {r.target for r in graph.relationships}
    unsupported |= {
        i
        for i in range(len(resolution.entities), len(graph.entities))
        if i not in linked and i != ends.vendor
    }
    return graph.without(unsupported) if unsupported else graph


@dataclass(frozen=True, slots=True)
class _Vendor:
    """The vendor whose graph is built: its name (None for ``_unattributed``), type,
    and the keys its names and folder aliases match under."""

    name: str | None
    type: str
    keys: frozenset[str]
    squashed: frozenset[str]
    aliases: tuple[str, ...]
    variants: frozenset[str] = frozenset()
    """Keys of the organisations the corpus names after the vendor with or without a
    word such as "Studios" ("Mojang" for Mojang Studios): the vendor in its notes."""
    brand: frozenset[str] = frozenset()
    """The key of the word the vendor puts in front of its products' names ("apache" of
    the Apache Software Foundation): "Apache Cassandra" and "Cassandra" in its notes
    are one product, as "HashiCorp Nomad" and "Nomad" are."""

    @classmethod
    def of(cls, vendor: str | None, aliases: Sequence[str], gazetteer: Gazetteer | None) -> _Vendor:
        name = vendor if vendor and not vendor.startswith("_") else None
        kind = "ORG"
        if name is not None:
            entry = gazetteer.lookup(name) if gazetteer is not None else None
            declared = entry.type if entry and entry.type != "PRODUCT" else None
            kind = declared or guess_vendor_type(name)
        return cls(
            name,
            kind,
            frozenset(name_key(v) for v in (name, *aliases) if v),
            frozenset(squashed_name(v) for v in (name, *aliases) if v),
            tuple(aliases),
            _variants(name, gazetteer) if name is not None and kind == "ORG" else frozenset(),
            _brand(name, gazetteer) if name is not None and kind == "ORG" else frozenset(),
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The vendor's display name and folder aliases."""
        return (self.name, *self.aliases) if self.name else ()

    def clashing(self, notes: Sequence[VendorNote]) -> list[VendorNote]:
        """Notes about a product named like the vendor (MongoDB by MongoDB Inc.): the
        vendor and the product are two entities of one name."""
        return [
            n
            for n in notes
            if n.facts.is_product and n.facts.subject and name_key(n.facts.subject) in self.keys
        ]


#: Words an organisation's name may end with or go without ("Mojang Studios",
#: "Progress Software", "Mozilla Foundation").
SAME_ORG_WORDS = ("Studios", "Software", "Foundation", "Labs", "Technologies", "Games")
_SAME_ORG_FOLDED = frozenset(w.casefold() for w in SAME_ORG_WORDS)


#: Words after a brand that make the rest of an organisation's name ("Apache Software
#: Foundation", "Eclipse Foundation", "Progress Software").
BRAND_TAILS = frozenset(
    ["software", "foundation", "inc", "corporation", "corp", "ltd", "labs", "technologies"]
)


def _brand(name: str, gazetteer: Gazetteer | None) -> frozenset[str]:
    """The key of the vendor's brand: the one word before words that only say it is an
    organisation, where the corpus declares no product of that name ("Apache" of the
    Apache Software Foundation; not "Linux" of the Linux Foundation, nor "Python" of the
    Python Software Foundation: products of their own)."""
    words = name.split()
    if len(words) < 2 or any(w.casefold().strip(".,") not in BRAND_TAILS for w in words[1:]):
        return frozenset()
    entry = gazetteer.lookup(words[0]) if gazetteer is not None else None
    if entry is not None and entry.type == "PRODUCT":
        return frozenset()
    return frozenset([name_key(words[0])])


def _variants(name: str, gazetteer: Gazetteer | None) -> frozenset[str]:
    """Keys of the organisations the corpus declares under the vendor's name with or
    without one of :data:`SAME_ORG_WORDS` ("Mojang" and "Mojang Studios"; not "Linux"
    of "Linux Foundation", a product)."""
    if gazetteer is None:
        return frozenset()
    words = name.split()
    candidates = [f"{name} {w}" for w in SAME_ORG_WORDS]
    if len(words) > 1 and words[-1].casefold() in _SAME_ORG_FOLDED:
        candidates.append(" ".join(words[:-1]))
    out: set[str] = set()
    for candidate in candidates:
        entry = gazetteer.lookup(candidate)
        if entry is not None and entry.type == "ORG" and name_key(entry.name) != name_key(name):
            out.add(name_key(candidate))
    return frozenset(out)


def _products_by_note(
    raw: Sequence[RawMention], paths: dict[int, str]
) -> dict[str, dict[str, str]]:
    """Each note's product names in its prose, by their squashed form ("nodejs")."""
    out: dict[str, dict[str, str]] = {}
    for m in raw:
        if m.label == "PRODUCT":
            out.setdefault(paths.get(m.chunk_id, ""), {}).setdefault(squashed_name(m.name), m.name)
    return out


def _texts_by_note(rows: Sequence[VendorChunkExtraction]) -> dict[str, str]:
    """Each note's prose, its chunks' bodies one after another."""
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row.path, []).append(row.content[row.body_offset :])
    return {path: "\n".join(parts) for path, parts in out.items()}


#: Last words of a release page's own phrases, which the model reads as names ("Long
#: Term Support Branch", "Oracle Lifetime Support Policy", "Release Dates").
_RELEASE_HEADS = frozenset(
    """
    support branch branches policy policies phase phases date dates builds milestones
    patching schedule bundles lifecycle releases release channel channels updates
    """.split()  # noqa: SIM905
)


def _release_phrase(name: str) -> bool:
    """Several words ending in a word of a release page's phrases: no named thing,
    unless the words before name a product ("Ansible Releases", :meth:`Namer.canonical`).

    >>> _release_phrase("Long Term Support Branch"), _release_phrase("Spring Cloud")
    (True, False)
    >>> _release_phrase("Azure Standard Support End Date"), _release_phrase("Annual Channel")
    (True, True)
    """
    words = name.split()
    return len(words) > 1 and words[-1].casefold() in _RELEASE_HEADS


def _undeclared_release_phrase(name: str, label: str, namer: Namer) -> bool:
    """:func:`_release_phrase`, unless the words name a product the corpus declares
    ("Ansible Releases"): no entity, as a mention or as a relationship's end."""
    return _release_phrase(name) and not namer.canonical(name, label)[2]


#: A sentence's end inside a span ("Mac OS X. Starting"), not a dotted abbreviation's
#: ("U.S. Department of Defense").
_SENTENCE_END = re.compile(r"(?<![A-Z]\.[A-Z])\.\s+\S")
#: A span that starts with a version ("10.5 Leopard", of "Mac OS X 10.5 Leopard") or
#: ends in a versioned word and a full stop ("5S.").
_VERSION_CUT = re.compile(r"^\d+(?:\.\d+)+\s|\d\S*\.$")


def _torn_span(text: str) -> bool:
    """A span the model cut across a sentence's end or through a versioned name: no
    name of a thing (people keep their initials, so this is for other types).

    >>> [_torn_span(t) for t in ("X. Starting", "5S.", "10.5 Leopard", "GPU-Z. 2")]
    [True, True, True, True]
    >>> [_torn_span(t) for t in ("U.S. Department of Defense", "Lutron Co., Inc.", "Java 17")]
    [False, False, False]
    """
    return bool(_SENTENCE_END.search(text) or _VERSION_CUT.search(text))


def _prose_mentions(rows: Sequence[VendorChunkExtraction], namer: Namer) -> list[RawMention]:
    """The names the language side found in the chunks' prose, placed in their
    chunks; not a heading, a lower-case common noun, a mention of the overlap, or a
    name inside inline code that no note declares (`` `YY.M.0.BuildNumber` `` is a
    placeholder; a product the notes declare, `` `ansible-core` ``, is one there too)."""
    gazetteer = namer.gazetteer
    raw: list[RawMention] = []
    for row in rows:
        body = row.content[row.body_offset :] if row.content else ""
        headings = _heading_spans(body)
        code = [m.span() for m in _INLINE_CODE.finditer(body)]
        for found in (part for e in row.result.entities for part in _slash_parts(e, gazetteer)):
            if found.start < row.overlap_chars or not (
                namer.is_name(found.text) and namer.is_name(found.canonical)
            ):
                continue
            if found.source == "ner" and any(
                s <= found.start and found.end <= e and found.end - found.start >= e - s - 2
                for s, e in headings
            ):
                continue  # a whole section heading the model read as a name
            if any(s < found.start and found.end < e for s, e in code) and (
                gazetteer is None or gazetteer.lookup(found.canonical) is None
            ):
                continue
            if found.text.islower() and (gazetteer is None or gazetteer.lookup(found.text) is None):
                continue  # names are capitalised; a lower-case word is a common noun
            if found.source == "ner" and _undeclared_release_phrase(
                found.canonical, found.label, namer
            ):
                # "Long Term Support Branch", "Oracle Lifetime Support Policy", "Windows
                # Server Annual Channel", "Azure Standard Support End Date"
                continue
            if found.label != "PERSON" and _torn_span(found.text):
                continue  # "X. Starting", "iPhone 5S." cut, "10.5 Leopard"
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
    return raw


def _slash_parts(found: EntityMention, gazetteer: Gazetteer | None) -> list[EntityMention]:
    """A name of names the corpus declares joined by slashes or an ampersand ("C/C++",
    "Envoy/Kubernetes", "Chrome/Chromium", "iPhone & iPad") is each of them, typed as
    declared; one the corpus declares whole, or with a part it does not ("C++/CLI",
    "Control-M/Server", "Erlang/OTP", "Procter & Gamble"), stays one."""
    text = found.text
    joint = "/" if "/" in text else " & " if " & " in text else ""
    if not joint or gazetteer is None or gazetteer.lookup(text) is not None:
        return [found]
    parts: list[EntityMention] = []
    at = 0
    for piece in text.split(joint):
        word = piece.strip()
        entry = gazetteer.lookup(word) if word else None
        if entry is None:
            return [found]
        start = found.start + at + piece.index(word)
        parts.append(
            replace(
                found,
                text=word,
                canonical=word,
                label=entry.type,
                start=start,
                end=start + len(word),
                source="ruler",
            )
        )
        at += len(piece) + len(joint)
    return parts


def _one_word_people_as_products(
    raw: list[RawMention],
    namer: Namer,
    prose: Sequence[VendorChunkExtraction] = (),
    notes: Sequence[VendorNote] = (),
) -> list[RawMention]:
    """The model's one-word people, read as products: in these notes a person is
    named in full ("Ryan Dahl"), while a lone capitalised word it calls a person is
    mostly a product ("Safari", "Kafka", "Kepler", "Mac"). One the ``prose`` says
    makes, supports or acquires something is an organisation ("Tidelift"). A word of
    a person's full name in the same notes or among the ``notes``' makers ("Dahl",
    "Yukihiro"), an acronym ("SDDC"), a participle ("Extended") and a name the
    corpus declares keep their type."""
    people = [m.name for m in raw if m.label == "PERSON" and " " in m.name.strip()]
    people += [m.name for note in notes for m in note.facts.makers if m.type == "PERSON"]
    names = {w.casefold() for name in people for w in name.split()}
    acting = {
        r.source.casefold()
        for row in prose
        for r in row.result.relations
        if r.type in ("PRODUCES", "SUPPORTS", "ACQUIRED")
    }
    out = []
    for m in raw:
        if (
            m.source == "ner"
            and m.label == "PERSON"
            and len(m.name.split()) == 1
            and not m.name.isupper()
            and not m.name.endswith("ed")
            and m.name.casefold() not in names
            and not namer.canonical(m.name, m.label)[2]
        ):
            m = replace(m, label="ORG" if m.name.casefold() in acting else "PRODUCT")
        out.append(m)
    return out


#: Last words that make a name a product's, whatever the model says ("Extensible
#: Markup Language", "X Window System", "User Datagram Protocol", "Semantic
#: Versioning", a specification): in the corpus no organisation's name ends so.
PRODUCT_HEADS = frozenset(
    """
    System Language Protocol Format Framework Library Platform Engine Toolkit Runtime
    Specification Interface Environment Notation Compiler Editor Server Kit Versioning
    """.split()  # noqa: SIM905
)


def _named_kinds_as_products(
    raw: list[RawMention], namer: Namer, gazetteer: Gazetteer | None = None
) -> list[RawMention]:
    """The model's organisations whose name ends with a kind of product ("Extensible
    Markup Language", "Team Foundation Server"), read as products; a name the corpus
    declares keeps its type, and so does plain English written once ("Application
    Programming Interface": a concept the graph leaves out as an organisation guessed
    once, not a product to keep)."""
    seen = Counter(name_key(m.name) for m in raw)
    out = []
    for m in raw:
        if (
            m.source == "ner"
            and m.label == "ORG"
            and _named_kind(m.name)
            and not namer.canonical(m.name, m.label)[2]
            and (seen[name_key(m.name)] > 1 or not capitalised_phrase(m.name, gazetteer))
        ):
            m = replace(m, label="PRODUCT")
        out.append(m)
    return out


def _named_kind(name: str) -> bool:
    """A name of several words ending with a kind of product (:data:`PRODUCT_HEADS`)."""
    words = re.sub(r"\s*\([^)]*\)\s*$", "", name).split()
    return len(words) > 1 and words[-1] in PRODUCT_HEADS


@dataclass(slots=True)
class _Seen:
    """What the resolved mentions say of each entity: how sure each mention makes
    us, its first mention (for the snippet) and who found it."""

    mentions: list[RawMention]
    mention_entity: list[int]
    confidences: list[list[float]]
    first_seen: list[RawMention | None]

    @classmethod
    def of(cls, mentions: list[RawMention], resolution: Resolution, graph: VendorGraph) -> _Seen:
        """Tallied, with each mention placed once in ``graph.mentions``."""
        n = len(resolution.entities)
        seen = cls(mentions, list(resolution.mention_entity), [[] for _ in range(n)], [None] * n)
        placed: set[tuple[int, int, int]] = set()
        for m, entity_index in zip(mentions, resolution.mention_entity, strict=True):
            seen.confidences[entity_index].append(MENTION_CONFIDENCE.get(m.source, 0.6))
            # the snippet's mention: the first one in the text (front matter has no span)
            shown = seen.first_seen[entity_index]
            if shown is None or (shown.start == shown.end and m.start < m.end):
                seen.first_seen[entity_index] = m
            if (entity_index, m.chunk_id, m.start) in placed:
                continue
            placed.add((entity_index, m.chunk_id, m.start))
            graph.mentions.append(GraphMention(entity_index, m.chunk_id, m.start, m.end, m.text))
        return seen

    def entities(self, resolution: Resolution) -> list[GraphEntity]:
        """The resolved entities, with their confidence, aliases and snippet."""
        out = []
        for i, e in enumerate(resolution.entities):
            first = self.first_seen[i]
            out.append(
                GraphEntity(
                    name=e.canonical,
                    normalized_name=e.key,
                    type=e.type,
                    aliases=tuple(
                        sorted(a for a in set(e.aliases) if a != e.canonical and not is_release(a))
                    ),
                    confidence=_noisy_or(self.confidences[i]),
                    mention_count=len(self.confidences[i]),
                    snippet=snippet(first.content, first.start, first.end) if first else "",
                )
            )
        return out

    def sources(self, count: int) -> list[set[str]]:
        """Who found each of the first ``count`` entities (``ner``, ``ruler``, ...)."""
        out: list[set[str]] = [set() for _ in range(count)]
        for m, entity_index in zip(self.mentions, self.mention_entity, strict=True):
            out[entity_index].add(m.source)
        return out


class _Ends:
    """The entity a relationship's end names: a resolved entity, the vendor, or an
    end no mention names (a resolved pronoun, the vendor), kept with its evidence
    the relationship's own (:attr:`extra`)."""

    def __init__(self, namer: Namer, settled: dict[str, tuple[str, str]], resolution: Resolution):
        self.namer = namer
        self.settled = settled
        self.resolution = resolution
        self.by_key: dict[str, int] = {}
        for (_, key), index in resolution.by_key.items():
            self.by_key.setdefault(key, index)
        self.extra: list[GraphEntity] = []
        self._extra_index: dict[str, int] = {}
        self.vendor: int | None = None

    def __call__(self, name: str, label: str, create: bool = True) -> int | None:
        """The entity a relationship's end names; without ``create``, only one a
        mention or another relationship already made."""
        if name == VENDOR:
            return self.vendor
        name, label, _ = self.namer.canonical(name, label)
        name, label = self.settled.get(name_key(name), (name, label))
        key = name_key(name)
        found = self.by_key.get(key)
        if found is not None:
            return found
        if not create:
            return self._extra_index.get(key)
        if not self.namer.is_name(name) or name.islower():
            return None
        if label != "PERSON" and _torn_span(name):
            return None  # as for a mention (_prose_mentions): "X. Starting" names nothing
        if label == "PERSON" and (has_org_word(name) or guess_vendor_type(name) != "PERSON"):
            # a guessed end ("Container Platform" of "OpenShift ...", "RDS Extended
            # Support") is nobody
            return None
        if key not in self._extra_index:
            self._extra_index[key] = self._add(GraphEntity(name, key, label, (), 0.5, 0, ""))
        return self._extra_index[key]

    def _add(self, entity: GraphEntity) -> int:
        self.extra.append(entity)
        return len(self.resolution.entities) + len(self.extra) - 1

    def place_vendor(self, me: _Vendor, clash: list[VendorNote], graph: VendorGraph) -> None:
        """Find or add the vendor's own entity (:attr:`vendor`); a product named like
        it stays a second entity, with a problem saying so."""
        if me.name is None:
            return
        if not clash:
            self.vendor = self(me.name, me.type)
        else:
            self.vendor = self.resolution.by_key.get((me.type, name_key(me.name)))
        if self.vendor is None and self.namer.is_name(me.name):
            # the vendor's own name is a name, however it reads ("ArangoDB Inc. ArangoDB");
            # a folder named by vocabulary ("LTS") names no one
            self.vendor = self._add(
                GraphEntity(me.name, name_key(me.name), me.type, (), 0.5, 0, "")
            )
        if not clash:
            return
        graph.problems.extend(
            GraphProblem(
                n.path,
                "subject_is_vendor",
                f"the note's product {n.facts.subject!r} is named like its vendor",
                f"kept as two entities: the {me.type} and the PRODUCT it produces",
            )
            for n in clash
        )


def _vendor_stated_by_notes(graph: VendorGraph, vendor: int, structural: Sequence[RawEdge]) -> None:
    """Record where the notes' structure states the vendor: a front-matter mention
    (no span) in the first chunk of each note whose folder, title, identifiers or
    support offer gave a kept relationship of the vendor. A vendor the prose never
    writes ("Meta", whose product pages say only "React") is then still found in
    its notes, as a ``created_by`` maker is."""
    kept = {r.evidence_chunk_id for r in graph.relationships if vendor in (r.source, r.target)}
    chunks = sorted({e.chunk_id for e in structural if VENDOR in (e.source, e.target)} & kept)
    placed = {(m.chunk_id, m.start) for m in graph.mentions if m.entity == vendor}
    own = graph.entities[vendor]
    added = [c for c in chunks if (c, 0) not in placed]
    graph.mentions.extend(GraphMention(vendor, c, 0, 0, own.name) for c in added)
    if added:
        graph.entities[vendor] = replace(own, mention_count=own.mention_count + len(added))


def _gather_edges(
    rows: Sequence[VendorChunkExtraction], structural: Sequence[RawEdge], ends: _Ends
) -> dict[tuple[int, int, str], list[RawEdge]]:
    """Every piece of evidence of every relationship, by (source, target, type):
    the prose's relations (not both ends in the overlap), then the notes' own."""
    edges: dict[tuple[int, int, str], list[RawEdge]] = {}
    for row in rows:
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
                _prose_detail(r),
            )
            _add_edge(edges, edge, ends)
    for edge in structural:
        _add_edge(edges, edge, ends)
    return edges


def _prose_detail(r: RelationMention) -> tuple[tuple[str, str], ...]:
    if r.type == "MENTIONED_WITH":
        return ()
    if not r.detail:
        return (("provenance", "prose"),)
    # a support rule's detail is the offering's name; a possessive's says how it owns
    key = "owned" if r.method == POSS else "kind" if r.method == USES else "offering"
    return (("provenance", "prose"), (key, r.detail))


def _parts_of_products(
    edges: dict[tuple[int, int, str], list[RawEdge]], types: Sequence[str]
) -> dict[tuple[int, int, str], list[RawEdge]]:
    """ "X is part of Y" is who makes X when Y is an organisation (the prose rule
    ``project_of``, read before the names settle) and RELATED_TO when Y settled as a
    product ("Bitbucket Cloud is part of the Atlassian Cloud", the model's organisation
    and a product by its name): such evidence moves to the symmetric pair."""
    out = dict(edges)
    for (s, t, rel_type), evidence in edges.items():
        if rel_type != "PRODUCES" or types[s] != "PRODUCT" or types[t] != "PRODUCT":
            continue
        parts = [replace(ev, type="RELATED_TO") for ev in evidence if ev.method == PART_OF_ORG]
        if parts:
            a, b = min(s, t), max(s, t)
            out[a, b, "RELATED_TO"] = [*out.get((a, b, "RELATED_TO"), []), *parts]
    return out


#: The prose rule of "a Node.js web application framework" (extraction.nlp.pattern_rules).
NAMED_KIND = "pattern:kind_of"
#: The prose rule of "a PHP HTTP client", and the kinds of what a product speaks.
SPEAKS = "pattern:speaks"
PROTOCOL_KINDS = frozenset(["protocol", "standard", "format", "specification"])
#: The prose rule of "a JavaScript engine", and the kinds of what an engine runs.
ENGINE_OF = "pattern:engine_of"
RUN_KINDS = PROTOCOL_KINDS | frozenset(["language"])
#: What the product these rules name may be for the graph to keep the edge.
NAMED_AFTER_KINDS = {SPEAKS: PROTOCOL_KINDS, ENGINE_OF: RUN_KINDS}
#: The prose rule of "a toolkit to build applications with Y".
BUILD_WITH = "pattern:build_with"
#: Kinds of product (what their notes say they are) that a framework or library
#: named after them is written in or speaks, not built on.
NOT_BASES = frozenset(["language", "protocol", "standard", "format", "specification"])
#: Kinds of a device, or a line of them, that runs a system rather than being built on
#: it ("a line of smartphones ... that use Apple's iOS").
DEVICE_KINDS = frozenset(["line", "series", "hardware", "computer", "console"])
#: The prose rule of "X uses Y" (extraction.nlp.pattern_rules).
USES = "pattern:uses"
#: The prose rule of "X embeds Y".
EMBEDS = "pattern:embeds"
#: The prose rule of "V's X" (extraction.nlp.pattern_rules), and the confidence it
#: has when V is the graph's own vendor: the PRODUCES floor.
POSS = "pattern:poss"
VENDOR_POSS_CONFIDENCE = 0.45
#: The prose rule of "part of / a project of" an organisation.
PART_OF_ORG = "pattern:project_of"
#: The methods of the prose rules that relate two products
#: (:data:`~extraction.models.PRODUCT_PAIR_RULES`): their evidence counts only where
#: both ends settled as products.
PRODUCT_ENDS = frozenset(f"pattern:{rule}" for rule in PRODUCT_PAIR_RULES)


def _kept_relationships(
    edges: dict[tuple[int, int, str], list[RawEdge]], types: Sequence[str]
) -> tuple[list[GraphRelationship], list[GraphRelationship]]:
    """The typed relationships whose ends fit their type and whose strongest
    evidence reaches its floor, and the co-occurrence edges, each with its evidence."""
    typed: list[GraphRelationship] = []
    cooccurrence: list[GraphRelationship] = []
    for (s, t, rel_type), evidence in sorted(edges.items()):
        if types[s] != "PRODUCT" or types[t] != "PRODUCT":
            evidence = [ev for ev in evidence if ev.method not in PRODUCT_ENDS]
            if not evidence:
                continue
        allowed = END_TYPES.get(rel_type)
        if allowed is not None and not (types[s] in allowed[0] and types[t] in allowed[1]):
            continue
        best = max(evidence, key=lambda ev: (ev.confidence, -ev.chunk_id))
        if allowed is not None and best.confidence < MIN_CONFIDENCE.get(rel_type, 0.0):
            continue
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
                "chunks": sorted({ev.chunk_id for ev in evidence})[:MAX_EVIDENCE_CHUNKS],
                # the rule of the strongest evidence
                "method": best.method,
                **dict(best.detail),
            },
        )
        (cooccurrence if allowed is None else typed).append(rel)
    return typed, cooccurrence


def _used_kind(edge: RawEdge, namer: Namer) -> str:
    """What a product used is: as the corpus declares it, or as the sentence calls it
    ("uses the GObject type system": ``uses``' detail)."""
    return namer.kind(edge.target) or dict(edge.detail).get("kind", "")


def _makers_first(typed: list[GraphRelationship]) -> list[GraphRelationship]:
    """Without SUPPORTS where the graph says the same vendor makes the product
    (Sonatype "provides commercial support" for Nexus Repository, which the note says
    Sonatype develops; "Microsoft also provides commercial support for Microsoft
    Build of OpenJDK"): SUPPORTS is the seller of another maker's product's support."""
    made = {(r.source, r.target) for r in typed if r.type == "PRODUCES"}
    return [r for r in typed if not (r.type == "SUPPORTS" and (r.source, r.target) in made)]


def _unsupported(
    graph: VendorGraph,
    seen: _Seen,
    resolved: int,
    vendor: int | None,
    gazetteer: Gazetteer | None = None,
) -> set[int]:
    """Entities to leave out: a name the small model guessed once, that no typed
    relationship supports, is more often a capitalised phrase than an organisation,
    person, place or event. A name written with an organisation's word is kept, in its
    canonical form or as the note wrote it ("Velquinlum Corporation", kept as
    "Velquinlum"), unless it is plain English written with capitals
    (:func:`capitalised_phrase`: "Operating Systems", "Important Security"). A product
    the model alone guessed once stays unless it is one plain plural ("Scripts") or
    plain English words in capitals ("Application Platform")."""
    supported = {r.source for r in graph.relationships} | {r.target for r in graph.relationships}
    sources = seen.sources(resolved)
    return {
        i
        for i, e in enumerate(graph.entities)
        if i < resolved
        and sources[i] == {"ner"}
        and i not in supported
        and i != vendor
        and (
            e.type != "PRODUCT"
            or (
                e.mention_count == 1
                and (
                    _plain_word(e.name) or (" " in e.name and capitalised_phrase(e.name, gazetteer))
                )
            )
        )
        and (_guessed_once(e, gazetteer) or (e.type == "ORG" and _bare_acronym(e, gazetteer)))
    }


def _guessed_once(e: GraphEntity, gazetteer: Gazetteer | None) -> bool:
    """A name the model wrote once with no organisation's word of its own (plain English
    in capitals has none) and that is not a person's name in full ("Hank Scorpio", the
    model's safest guess)."""
    names = [e.name, *e.aliases]
    if e.type == "ORG":
        # "the Release Date": the article is no organisation's word in a name of
        # several (it still reads as one in "the Canonical", "the MITRE")
        shown = [(n, display_form(n)) for n in names]
        names = [d if " " in d else n for n, d in shown]
    return (
        e.mention_count == 1
        and not any(
            (has_org_word(name) or (" " in name and _org_head(name)))
            and not capitalised_phrase(name, gazetteer)
            for name in names
        )
        and not (e.type == "PERSON" and guess_vendor_type(e.name) == "PERSON")
    )


def _plain_word(name: str) -> bool:
    """One letter ("F" of "F#"), or one plural English noun written with a capital
    ("Scripts", "Settings", "Templates"; not a rare word, "Octicons", "Ingres"): no
    product's name when the model alone guessed it, once.

    >>> _plain_word("Scripts"), _plain_word("F"), _plain_word("Safari"), _plain_word("Octicons")
    (True, True, False, False)
    """
    return len(name) == 1 or (
        name.isalpha() and name[1:].islower() and plural_noun(name.lower()) and not rare_word(name)
    )


_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,6}")


def _bare_acronym(entity: GraphEntity, gazetteer: Gazetteer | None) -> bool:
    """An organisation the model guessed whose every name is an acronym the corpus does
    not declare: more often a release phase, a format or a field ("LTSB", "PDF",
    "SRE") than a company, however often the notes write it.

    >>> _bare_acronym(GraphEntity("LTSB", "ltsb", "ORG", (), 0.5, 4, ""), None)
    True
    """
    names = (entity.name, *entity.aliases)
    acronyms = [n for n in names if _ACRONYM.fullmatch(n)]
    return bool(acronyms) and all(
        # an acronym the corpus does not declare, or what it stands for written as plain
        # English ("MSP", "Managed Service Provider"; "ESM", "Expanded Security
        # Maintenance"), not an organisation's name ("Internet Engineering Task Force")
        (n in acronyms and (gazetteer is None or gazetteer.lookup(n) is None))
        or (n not in acronyms and capitalised_phrase(n, gazetteer))
        for n in names
    )


#: Last words (before "of") that make a name of plain words an organisation's
#: ("Internet Archive", "Open Container Initiative", "Research Directorate").
ORG_HEADS = frozenset(
    """
    foundation foundations university institute initiative council consortium association
    society committee commission agency department ministry office bureau museum school
    college academy panel organization organisation federation union forum authority
    administration laboratory laboratories lab labs inc ltd llc corp corporation company
    group team alliance community project center centre bank fund trust church club league
    network board archive division directorate studio studios press party force
    """.split()  # noqa: SIM905
)
_LINK_WORDS = frozenset(["of", "and", "for", "on", "the", "in", "&", "to"])


def _org_head(name: str) -> bool:
    """Whether the last word of a name (before "of", "for", "on") is one organisations
    are named with ("San Diego Supercomputer Center", "Internet Engineering Task Force")."""
    words = re.split(r"\s(?:of|for|on)\s", name)[0].split()
    return bool(words) and words[-1].casefold().strip(".,") in ORG_HEADS


def capitalised_phrase(name: str, gazetteer: Gazetteer | None) -> bool:
    """Whether ``name`` is plain English written with capitals, as the small model
    often takes for an organisation in a title-cased sentence: every word one English
    uses (wordfreq's Zipf >= 3), no acronym, digit, capital inside or name the corpus
    declares ("Public *Chef* Supermarket"), and no organisation's word as its head.

    >>> capitalised_phrase("Operating Systems", None), capitalised_phrase("Internet Archive", None)
    (True, False)
    >>> capitalised_phrase("IBM z Systems", None), capitalised_phrase("Class Library", None)
    (False, True)
    """
    words = [w.strip(".,;:()\"'’") for w in name.split()]
    content = [w for w in words if w and w.casefold() not in _LINK_WORDS]
    if not content or not words[0][:1].isupper():
        return False
    for word in content:
        if any(c.isdigit() or c.isupper() for c in word[1:]) or not word.isalpha():
            return False
        if rare_word(word) or (gazetteer is not None and gazetteer.lookup(word) is not None):
            return False
    return not _org_head(name)


def _release_table(row: VendorChunkExtraction) -> bool:
    """A chunk of the "Releases" section the corpus reader renders from front matter."""
    header = row.content[: max(0, row.body_offset - 2)]
    return header == "Releases" or header.endswith(" > Releases")


def _add_edge(
    edges: dict[tuple[int, int, str], list[RawEdge]],
    edge: RawEdge,
    entity_for: _Ends,
) -> None:
    if not (
        (edge.source == VENDOR or entity_for.namer.is_name(edge.source))
        and entity_for.namer.is_name(edge.target)
    ):
        return
    if any(
        _undeclared_release_phrase(end, label, entity_for.namer)
        for end, label in ((edge.source, edge.source_label), (edge.target, edge.target_label))
        if end != VENDOR
    ):
        return  # "the Long-Term Servicing Channel": a release phrase, as a mention is
    if edge.method == NAMED_KIND and entity_for.namer.kind(edge.target) in (*NOT_BASES, ""):
        # "a PHP web framework" is written in PHP, not built on it; a name no note
        # declares is no platform ("a Free Software operating system", "an HTML5 game
        # framework")
        return
    kinds = NAMED_AFTER_KINDS.get(edge.method)
    if kinds is not None and entity_for.namer.kind(edge.target) not in kinds:
        # "a PHP HTTP client" speaks HTTP, "a JavaScript engine" runs JavaScript; "a
        # Node.js web framework" is kind_of's, "a PHP web framework" is only written in
        # PHP and "a MySQL storage engine" is MySQL's part
        return
    if edge.method == BUILD_WITH and not entity_for.namer.kind(edge.target):
        # "a toolkit to build desktop applications with Java" is a Java toolkit, built on
        # the language as the labelled notes read it; a name no note declares may be a
        # mere technique ("build apps with Web Components")
        return
    if (
        edge.method == POSS
        and ("owned", NAMED_KIND_OWNED) in edge.detail
        and entity_for.namer.kind(edge.target) in NOT_BASES
    ):
        return  # "Google's JavaScript engine" is its engine for JavaScript
    if edge.method == EMBEDS and entity_for.namer.kind(edge.target) in NOT_BASES:
        # "HTML can embed scripting languages such as PHP or JavaScript": a document
        # holding programs in a language is related to it, not built on it
        edge = replace(edge, type="RELATED_TO")
    if (
        edge.method == USES
        and _used_kind(edge, entity_for.namer) not in (*NOT_BASES, "")
        and entity_for.namer.kind(edge.source) not in DEVICE_KINDS
    ):
        # "X uses Y": a system, engine or library X uses is what X is built on ("uses the
        # Salt configuration management system", "uses Fedora as the upstream"); a
        # language, protocol or format it uses, or a name no note declares, stays related
        # ("uses the Structured Query Language", "uses REST and JSON"), and so does the
        # system a device runs ("smartphones ... that use Apple's iOS")
        edge = replace(edge, type="BASED_ON")
    # co-occurrence names no one new: an end that is no mention was left out on purpose
    # (a heading, a release phase: "Maintenance Support Phase")
    create = edge.type != "MENTIONED_WITH"
    s = entity_for(edge.source, edge.source_label, create)
    t = entity_for(edge.target, edge.target_label, create)
    if s is None or t is None or s == t:
        return
    if edge.method == POSS and (
        s == entity_for.vendor or entity_for.namer.declares_maker(edge.source, edge.target)
    ):
        # "V's X" in V's own notes: the vendor's possession is its product ("Apple's iOS
        # and iPadOS"), where another organisation's may be its customer's or partner's;
        # so is one the corpus files under V ("JetBrains' IntelliJ IDEA" in Google's)
        edge = replace(edge, confidence=max(edge.confidence, VENDOR_POSS_CONFIDENCE))
    if edge.type in ("RELATED_TO", "PARTNERS_WITH", "COMPETES_WITH", "MENTIONED_WITH") and s > t:
        s, t = t, s  # symmetric: one edge per pair
    edges.setdefault((s, t, edge.type), []).append(edge)
