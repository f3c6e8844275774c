"""A note made ready for the work queue: its chunks, each chunk's extraction
seeds and the keys of the work caches (content hash, extraction key)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from extraction.graph.gazetteer import Gazetteer, Hit
from extraction.graph.note_edges import subject_type
from extraction.models import ExtractionContext
from extraction.names import guess_vendor_type
from extraction.notes.card import note_card
from extraction.notes.chunking import chunk_document
from extraction.notes.document import Chunk, SourceDocument
from extraction.notes.structure import NoteFacts, note_facts
from extraction.notes.tokens import TokenCounter
from extraction.settings import ExtractionSettings

#: Bump when extraction output changes for the same input: cached results of an
#: older extractor are then recomputed, and the next rebuild extracts every note
#: made with another version again (``documents.extractor_version``).
EXTRACTOR_VERSION = "175"


Seed = tuple[str, str]
"""(surface text, entity type) the entity ruler is seeded with."""


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    document: SourceDocument
    chunks: tuple[Chunk, ...]
    contexts: tuple[ExtractionContext, ...]
    """Per chunk: the seeds its extraction ran with (part of its extraction key)."""
    chunk_hashes: tuple[str, ...]
    extraction_keys: tuple[str, ...]
    facts: NoteFacts
    card: str = ""
    """The note's card (:func:`extraction.notes.card.note_card`): in each chunk's
    full-text document, and embedded as the note's own vector."""

    @property
    def card_hash(self) -> str | None:
        """What the card's vector is cached by (None: no card)."""
        return sha256_text(self.card) if self.card else None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def note_seeds(doc: SourceDocument, facts: NoteFacts, gazetteer: Gazetteer) -> list[Seed]:
    """Seeds every chunk of a note gets: its vendor, subject, makers, the texts of its
    links to other notes and the names its links to other sites give."""
    seeds: list[Seed] = []
    if not doc.vendor.startswith("_"):
        entry = gazetteer.lookup(doc.vendor)
        seeds.append((doc.vendor, entry.type if entry else guess_vendor_type(doc.vendor)))
    if facts.subject and facts.is_product:
        # an organisation its description or the corpus says it is (HackerRank, Google)
        seeds.append((facts.subject, subject_type(facts, gazetteer)))
    for maker in facts.makers:
        entry = gazetteer.lookup(maker.name)
        seeds.append((maker.name, entry.type if entry else maker.type))
    for link in facts.links:
        product = gazetteer.product_for_slug(link.slug)
        # link text that names the linked product ("[MySQL](/mysql)"), not "see here"
        if product and link.text and gazetteer.lookup(link.text) == gazetteer.lookup(product):
            seeds.append((link.text, "PRODUCT"))
    for name in facts.site_names:
        # "[Fluentd](https://www.fluentd.org)": what a site is about is, over the corpus,
        # nearly always a product (of 140 home pages, 2 a company's)
        entry = gazetteer.lookup(name) or gazetteer.spelled(name)
        seeds.append((name, entry.type if entry else "PRODUCT"))
    return seeds


def chunk_context(
    doc: SourceDocument,
    text: str,
    seeds: Sequence[Seed],
    gazetteer: Gazetteer,
    subject: str | None = None,
) -> ExtractionContext:
    """Seeds for one chunk: the note's own, and every gazetteer name the chunk holds;
    ``subject``, the product the note is about, is who "It" is in its prose."""
    found = [(_as_written(text, hit), hit.entry.type) for hit in gazetteer.find(text)]
    vendor = None if doc.vendor.startswith("_") else doc.vendor
    return ExtractionContext(
        vendor=vendor,
        known_entities=tuple(sorted(dict.fromkeys([*seeds, *found]))),
        subject=subject,
    )


def _as_written(text: str, hit: Hit) -> str:
    """The seed's text: the name as the chunk writes it when only its case differs
    from the gazetteer's ("VMWare Harbor Registry"; the graph names it as declared)."""
    written = " ".join(text[hit.start : hit.end].split())
    return written if written.casefold() == hit.surface.casefold() else hit.surface


def extraction_key(text: str, context: ExtractionContext) -> str:
    fingerprint = orjson.dumps(
        [EXTRACTOR_VERSION, context.vendor, context.known_entities, text, context.subject]
    )
    return hashlib.sha256(fingerprint).hexdigest()


def prepare(
    doc: SourceDocument,
    counter: TokenCounter,
    settings: ExtractionSettings,
    gazetteer: Gazetteer,
    facts: NoteFacts | None = None,
) -> PreparedDocument:
    chunks = tuple(
        chunk_document(
            doc, counter, max_tokens=settings.chunk_tokens, overlap=settings.chunk_overlap
        )
    )
    facts = facts if facts is not None else note_facts(doc)
    seeds = note_seeds(doc, facts, gazetteer)
    subject = facts.subject if facts.subject and facts.is_product else None
    contexts = tuple(chunk_context(doc, c.text, seeds, gazetteer, subject) for c in chunks)
    return PreparedDocument(
        document=doc,
        chunks=chunks,
        contexts=contexts,
        chunk_hashes=tuple(sha256_text(c.content) for c in chunks),
        extraction_keys=tuple(
            extraction_key(c.text, ctx) for c, ctx in zip(chunks, contexts, strict=True)
        ),
        facts=facts,
        card=note_card(doc),
    )
