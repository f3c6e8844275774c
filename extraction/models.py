"""Plain data passed between the extraction stages.

spaCy objects never leave ``extraction``: every stage hands these frozen
dataclasses to the next one, and other packages only ever see them (or rows
in PostgreSQL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from extraction.lifecycle import ProductLifecycle

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
    "RELATED_TO",
    "MENTIONED_WITH",
)


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One markdown note read from the corpus."""

    path: str
    """Path relative to the corpus root, POSIX separators (``vendors/Acme/pricing.md``)."""
    vendor: str
    """Display name of the vendor (``Apple Inc.``); ``_unattributed`` if none is known."""
    category: str | None
    title: str
    metadata: dict[str, Any]
    """Front matter plus what the path says (vendor, category, document_type, dates)."""
    body: str
    """Markdown text without the front matter."""
    content_hash: str
    """sha256 of the file's bytes: unchanged hash means nothing to redo."""
    lifecycle: ProductLifecycle | None = None
    """The release cycles of a product note (its front matter's ``releases`` table)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document sized for the embedding window."""

    index: int
    total: int
    header: str
    """``Title > Section > Subsection``."""
    text: str
    """The chunk's own body text (may start with overlap from the previous chunk)."""
    token_count: int
    """Word pieces of :attr:`content` under the embedding model's tokenizer."""
    overlap_chars: int = 0
    """Leading characters of :attr:`text` repeated from the previous chunk."""

    @property
    def content(self) -> str:
        """What is embedded, indexed and returned: header, blank line, text."""
        return f"{self.header}\n\n{self.text}" if self.header else self.text

    @property
    def body_offset(self) -> int:
        """Offset of :attr:`text` inside :attr:`content`."""
        return len(self.header) + 2 if self.header else 0


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """What is known about a text before NER runs: seeds for the entity ruler."""

    vendor: str | None = None
    known_entities: tuple[tuple[str, str], ...] = ()
    """(surface text, entity type) pairs from front matter, e.g. (``TypeScript``, ``PRODUCT``)."""


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
    """``dependency``, ``pattern`` or ``cooccurrence``."""


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    entities: tuple[EntityMention, ...] = field(default_factory=tuple)
    relations: tuple[RelationMention, ...] = field(default_factory=tuple)
