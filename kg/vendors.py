"""Vendors and what their notes share: the vendor list with its counts, entities
that several vendors' notes mention, and vendors whose notes name other vendors.

Plain reads on a connection the caller holds (:meth:`kg.store.KnowledgeGraph.snapshot`
gives one), one or two statements each; nothing here is cached.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from sql.queries import queries


@dataclass(frozen=True, slots=True)
class VendorInfo:
    id: int
    name: str
    aliases: tuple[str, ...]
    document_count: int
    chunk_count: int
    entity_count: int
    relationship_count: int
    last_updated: datetime | None


@dataclass(frozen=True, slots=True)
class VendorPage:
    vendors: tuple[VendorInfo, ...]
    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class SharedEntity:
    """An entity that the notes of several vendors mention."""

    name: str
    type: str
    mentions: int
    vendors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class VendorMention:
    """``vendor``'s notes name ``other_vendor``, connected by ``relationship_types``."""

    vendor: str
    other_vendor: str
    entity_id: int
    entity: str
    entity_type: str
    mention_count: int
    relationship_types: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CrossVendorLinks:
    shared_entities: tuple[SharedEntity, ...]
    vendor_mentions: tuple[VendorMention, ...]


def vendor_info(row: dict[str, Any]) -> VendorInfo:
    """A vendor row (``kg_vendor_by_id``, ``kg_list_vendors``) as a :class:`VendorInfo`."""
    return VendorInfo(
        id=int(row["id"]),
        name=row["name"],
        aliases=tuple(row["aliases"] or ()),
        document_count=int(row["document_count"]),
        chunk_count=int(row["chunk_count"]),
        entity_count=int(row["entity_count"]),
        relationship_count=int(row["relationship_count"]),
        last_updated=row["last_updated"],
    )


def read_vendor_page(conn: psycopg.Connection[Any], *, limit: int, offset: int) -> VendorPage:
    """One page of vendors by name with their counts, and how many there are."""
    rows = conn.execute(queries()["kg_list_vendors"], {"limit": limit, "offset": offset}).fetchall()
    if not rows and offset:
        total_row = conn.execute(queries()["kg_vendor_count"]).fetchone()
        total = int(total_row["n"]) if total_row else 0
    else:
        total = int(rows[0]["total"]) if rows else 0
    return VendorPage(tuple(vendor_info(r) for r in rows), total, offset)


def read_cross_vendor_links(
    conn: psycopg.Connection[Any],
    vendor_id: int | None,
    *,
    limit: int,
    entity_types: Collection[str],
) -> CrossVendorLinks:
    """Shared entities and vendor mentions, for one vendor or (``None``) all."""
    q = queries()
    params = {"vendor_id": vendor_id, "limit": limit, "types": list(entity_types)}
    shared = conn.execute(q["kg_shared_entities"], params).fetchall()
    mentions = conn.execute(q["kg_vendor_mentions"], params).fetchall()
    return CrossVendorLinks(
        shared_entities=tuple(
            SharedEntity(r["name"], r["type"], int(r["mentions"]), tuple(r["vendors"]))
            for r in shared
        ),
        vendor_mentions=tuple(
            VendorMention(
                r["vendor"],
                r["other_vendor"],
                int(r["entity_id"]),
                r["entity"],
                r["entity_type"],
                int(r["mention_count"]),
                tuple(r["relationship_types"]),
            )
            for r in mentions
        ),
    )
