"""What a vendor's notes state by their structure, as graph facts (pure, no database).

A note about a product names entities in its front matter (the product at its
title, its ``created_by`` makers, its ``related`` topics) and states
relationships with their provenance: the makers produce it, the related topics
are related to it, and a CPE vendor or a title that names the vendor says the
vendor makes it. :mod:`extraction.graph.build` adds these to what the prose says.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from extraction.graph.naming import Namer, RawEdge, RawMention, is_name, name_key, squashed_name
from extraction.notes.structure import NoteFacts

#: Confidence of the facts the notes' structure states.
STRUCTURE_CONFIDENCE = {
    "created_by": 0.95,
    "identifiers": 0.75,
    "title_and_tags": 0.75,
    "title": 0.6,
    "related": 0.6,
}
#: The end of a structural relationship that is the vendor itself.
VENDOR = "\x00vendor"


@dataclass(frozen=True, slots=True)
class VendorNote:
    """A note of the vendor: its structural facts and where they point."""

    path: str
    facts: NoteFacts
    chunk_id: int
    """The note's first chunk: front-matter facts are evidenced there."""
    content: str = ""
    """That chunk's content (its header starts with the note's title)."""


def note_mentions(note: VendorNote, namer: Namer) -> list[RawMention]:
    """Entities the note's front matter names, evidenced by its first chunk: the
    subject (at the title that starts the chunk), its makers and related products."""
    facts = note.facts
    out: list[RawMention] = []

    def add(text: str, label: str, at_title: bool = False) -> None:
        if not is_name(text):
            return
        end = len(text) if at_title and note.content.startswith(text) else 0
        out.append(
            RawMention(note.chunk_id, 0, end, text, text, label, "front_matter", note.content, 0)
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


def note_edges(
    note: VendorNote,
    namer: Namer,
    vendor: str | None,
    vendor_type: str,
    vendor_keys: AbstractSet[str],
    vendor_squashed: AbstractSet[str],
) -> list[RawEdge]:
    """Relationships the note's structure states, with their provenance."""
    facts = note.facts
    if not (facts.subject and facts.is_product):
        return []
    subject = facts.subject
    out: list[RawEdge] = []

    def edge(source: str, label: str, type_: str, target: str, how: str, said: str) -> None:
        out.append(
            RawEdge(
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
        if name_key(maker.name) == name_key(subject):
            # "MongoDB" by "MongoDB Inc.": the maker is the vendor of that name, if any
            if name_key(maker.name) not in vendor_keys:
                continue
            source = VENDOR
        edge(source, maker.type, "PRODUCES", subject, "created_by", f"created_by: {makers}")
    if namer.gazetteer is not None:
        for slug in facts.related:
            product = namer.gazetteer.product_for_slug(slug)
            if product and name_key(product) != name_key(subject):
                edge(subject, "PRODUCT", "RELATED_TO", product, "related", f"related: {slug}")
    if vendor is None:
        return out
    if any(m and name_key(m.name) in vendor_keys for m in facts.makers):
        return out  # created_by already names the vendor
    cpe = [v for v in facts.cpe_vendors if v in vendor_squashed]
    if cpe:
        said = f"identifiers: cpe vendor {cpe[0]}"
        edge(VENDOR, vendor_type, "PRODUCES", subject, "identifiers", said)
    elif any(name_key(subject).startswith(k + " ") for k in vendor_keys):
        # a tag naming the vendor backs the title up; alone it proves nothing (HeroDevs
        # tags the Vue and Node.js pages it sells support for)
        tagged = [t for t in facts.tags if squashed_name(t) in vendor_squashed]
        if tagged:
            said = f"title: {subject}; tags: {tagged[0]}"
            edge(VENDOR, vendor_type, "PRODUCES", subject, "title_and_tags", said)
        else:
            edge(VENDOR, vendor_type, "PRODUCES", subject, "title", f"title: {subject}")
    return out
