"""What the language side of extraction finds, as plain data: entity and relation
mentions of one text, the seeds it starts from, and the types the graph keeps.

spaCy objects never leave ``extraction``: every stage hands these frozen
dataclasses to the next one, and other packages only ever see them (or rows
in PostgreSQL). A note and its chunks are :mod:`extraction.notes.document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Entity types the graph keeps. spaCy's OntoNotes labels are mapped onto
#: these (GPE/LOC/FAC -> LOCATION, ...); numeric and date labels are dropped.
ENTITY_TYPES: tuple[str, ...] = ("ORG", "PERSON", "PRODUCT", "LOCATION", "EVENT")

#: Relationship types, strongest first. MENTIONED_WITH is the weak
#: co-occurrence fallback and never carries a confidence of 0.5 or more.
RELATION_TYPES: tuple[str, ...] = (
    "WORKS_FOR",
    "FOUNDED_BY",
    "LOCATED_IN",
    "SUBSIDIARY_OF",
    "PRODUCES",
    "PARTNERS_WITH",
    "COMPETES_WITH",
    "ACQUIRED",
    "BASED_ON",
    "SUPPORTS",
    "RELATED_TO",
    "MENTIONED_WITH",
)


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """What is known about a text before NER runs: seeds for the entity ruler."""

    vendor: str | None = None
    known_entities: tuple[tuple[str, str], ...] = ()
    """(surface text, entity type) pairs from front matter, e.g. (``TypeScript``, ``PRODUCT``)."""
    subject: str | None = None
    """The product the note is about (its title), which "It" stands for in its prose."""


@dataclass(frozen=True, slots=True)
class EntityMention:
    text: str
    label: str
    """One of :data:`ENTITY_TYPES`."""
    start: int
    end: int
    """Character span in the analysed text."""
    canonical: str
    """Resolved display name (``Lutron Electronics Co., Inc.`` -> ``Lutron Electronics``)."""
    source: str = "ner"
    """``ner`` (statistical model) or ``ruler`` (seeded pattern)."""


@dataclass(frozen=True, slots=True)
class RelationMention:
    source: str
    source_label: str
    target: str
    target_label: str
    """Canonical names and entity types of both ends."""
    type: str
    """One of :data:`RELATION_TYPES`."""
    confidence: float
    sentence: str
    """The evidence sentence."""
    source_span: tuple[int, int]
    target_span: tuple[int, int]
    method: str
    """``dependency`` (the trigger-word rules), ``pattern:<rule>`` (the dependency
    patterns of :mod:`extraction.nlp.relation_patterns`) or ``cooccurrence``."""
    detail: str = ""
    """What the rule names besides the two ends: a support offering's name, or how a
    possessive owns its product (:data:`NAMED_KIND_OWNED`)."""


#: The detail of a possessive whose product names a kind of thing ("Apple's Mac
#: computers", extraction.nlp.relation_patterns): the graph keeps it only where the
#: name is no language, protocol or format ("Google's JavaScript engine" is an engine
#: for JavaScript).
NAMED_KIND_OWNED = "named kind"

#: The prose rules of :mod:`extraction.nlp.relation_patterns` that relate two products
#: ("part of the Elastic Stack", "made for Kubernetes", "uses Y", "supports Y", "the
#: successor of Y", "certified using Y"). Their slot also takes a name the small model
#: reads as a place ("the Elastic Stack"); the graph keeps their evidence only where
#: both ends settle as products (extraction.graph.build).
PRODUCT_PAIR_RULES = frozenset(
    ["part_of", "made_for", "uses", "supports_product", "successor", "certified", "acts_on"]
)


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    entities: tuple[EntityMention, ...] = field(default_factory=tuple)
    relations: tuple[RelationMention, ...] = field(default_factory=tuple)
