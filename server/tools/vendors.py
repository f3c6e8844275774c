"""``find_vendor_info`` and ``list_vendors``: the vendors and their graphs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kg.vendors import VendorInfo
from server.cursor import digest
from server.envelope import envelope
from server.models import VendorEnvelope
from server.settings import ResponseMode
from server.shaping import vendor_result
from server.tools.arguments import (
    ToolArguments,
    cursor_field,
    response_mode_field,
    vendor_name_field,
)
from server.tools.base import Call, Keyed, Tool, vendor_key_name
from server.tools.lifecycle import answer_day, lifecycle_summary


class FindVendorInfo(Tool):
    """A vendor's knowledge graph: statistics, most important entities and
    relationships; relationships are dropped first, then entities, to fit the budget."""

    name = "find_vendor_info"
    description = (
        "A vendor's knowledge graph: statistics, most important entities and relationships."
    )
    Envelope = VendorEnvelope

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()
        response_mode: ResponseMode | None = response_mode_field(
            "ids_only (entity and relationship ids), metadata (default: statistics), preview "
            "(top 5 entities and relationships) or full (capped graph: at most 100 entities "
            "and 500 relationships)"
        )
        include_relationships: bool = Field(
            True, description="include relationships (default true)"
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        # the lifecycle summary is as of today: a cached answer is not tomorrow's
        return self.service.vendor_cache, (
            "vendor",
            vendor_key_name(args.vendor_name),
            self.mode(args.response_mode),
            args.include_relationships,
            answer_day(None),
        )

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg, mode = self.service.kg, self.mode(args.response_mode)
        info = kg.vendor(args.vendor_name)
        stats = kg.statistics(info)
        graph = None
        if mode in ("ids_only", "full"):
            graph = kg.capped(info)
        elif mode == "preview":
            graph = kg.preview(info)
        result = vendor_result(
            mode=mode,
            name=info.name,
            aliases=info.aliases,
            stats=stats,
            graph=graph,
            include_relationships=args.include_relationships,
        )
        life = lifecycle_summary(kg.lifecycle(info), mode)
        # in full mode every cycle is listed; to fit the budget they go first, then
        # relationships, then entities (get_lifecycle pages through every cycle)
        cycles = [
            (i, c) for i, p in enumerate(life.get("products", [])) for c in p.get("cycles", [])
        ]
        entity_key = "entities" if "entities" in result else "entity_ids"
        rel_key = "relationships" if "relationships" in result else "relationship_ids"
        entities = list(result.get(entity_key) or [])
        relationships = list(result.get(rel_key) or [])
        cache_key = (
            f"vendor:{vendor_key_name(args.vendor_name)}:{mode}:{args.include_relationships}"
        )

        def build_env(n: int) -> dict[str, Any]:
            shown = dict(result)
            if entity_key in result:
                shown[entity_key] = entities[: min(len(entities), n)]
                shown["entities_left_out"] = len(entities) - len(shown[entity_key])
            if rel_key in result:
                shown[rel_key] = relationships[: max(0, n - len(entities))]
                shown["relationships_left_out"] = len(relationships) - len(shown[rel_key])
            shown["lifecycle"] = _cycles_shown(life, cycles, n - len(entities) - len(relationships))
            return envelope(
                "find_vendor_info",
                call.rid,
                shown,
                elapsed_ms=call.elapsed_ms(),
                cache_key=cache_key,
                build_id=build,
            )

        items = entities + relationships + [c for _, c in cycles]
        return self.fit(build_env, len(items), "entities, relationships and release cycles", items)


def _cycles_shown(
    life: dict[str, Any], cycles: list[tuple[int, dict[str, Any]]], n: int
) -> dict[str, Any]:
    """The lifecycle summary with the first ``n`` of its listed cycles (all when none
    are listed), and how many are left out."""
    if not cycles:
        return life
    kept = cycles[: max(0, n)]
    by_product: dict[int, list[dict[str, Any]]] = {}
    for index, cycle in kept:  # one pass: a vendor may have a thousand products
        by_product.setdefault(index, []).append(cycle)
    products = [{**p, "cycles": by_product.get(i, [])} for i, p in enumerate(life["products"])]
    return {**life, "products": products, "cycles_left_out": len(cycles) - len(kept)}


class ListVendors(Tool):
    """Vendors in the knowledge base with their aliases and counts, by name, paged."""

    name = "list_vendors"
    description = "Vendors in the knowledge base with their aliases and counts, by name."

    class Arguments(ToolArguments):
        page_size: int = Field(20, ge=1, le=100, description="vendors per page")
        cursor: str | None = cursor_field()

    def key(self, build: int, args: Arguments) -> Keyed:
        bound = _bound(args.page_size)
        return self.service.vendor_cache, ("vendors", bound, self.offset(args.cursor, bound, build))

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        page_size, bound = args.page_size, _bound(args.page_size)
        offset = self.offset(args.cursor, bound, build)
        page = self.service.kg.list_vendors(limit=page_size, offset=offset)
        rows = [vendor_row(v) for v in page.vendors]

        def build_env(n: int) -> dict[str, Any]:
            return envelope(
                "list_vendors",
                call.rid,
                rows[:n],
                elapsed_ms=call.elapsed_ms(),
                pagination=self.pagination(offset, n, page.total, page_size, bound, build),
                message=None if page.total else "the knowledge base has no vendors yet",
                cache_key=f"vendors:{bound}:{offset}",
                build_id=build,
            )

        return self.fit(build_env, len(rows), "vendors")


def vendor_row(v: VendorInfo) -> dict[str, Any]:
    """One list_vendors result."""
    return {
        "vendor_name": v.name,
        "aliases": list(v.aliases),
        "document_count": v.document_count,
        "chunk_count": v.chunk_count,
        "entity_count": v.entity_count,
        "relationship_count": v.relationship_count,
        "last_updated": v.last_updated.isoformat() if v.last_updated else None,
    }


def _bound(page_size: int) -> str:
    """What list_vendors cursors and cache entries are bound to."""
    return digest({"op": "list_vendors", "size": page_size})
