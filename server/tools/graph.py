"""``find_entity_path`` and ``get_entity_neighbors``: the graph questions of :mod:`kg`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kg.paths import Neighbourhood, PathResult
from server.envelope import envelope
from server.tools.arguments import (
    ToolArguments,
    Word,
    entity_field,
    relationship_types_field,
    vendor_name_field,
)
from server.tools.base import Call, Keyed, Tool, vendor_key_name


class _GraphQuestion(Tool):
    """A question about one vendor's graph, cached with the vendor's answers."""

    def key(self, build: int, args: Any) -> Keyed:
        """The tool, the vendor as cache keys hold it, the relationship types, then
        the other arguments in their order."""
        types = args.relationship_types
        rest = [
            getattr(args, name)
            for name in type(args).model_fields
            if name not in ("vendor_name", "relationship_types")
        ]
        return self.service.vendor_cache, (
            self.name,
            vendor_key_name(args.vendor_name),
            tuple(types) if types is not None else None,
            *rest,
        )


class FindEntityPath(_GraphQuestion):
    """The shortest chain of relationships linking two entities of a vendor's graph."""

    name = "find_entity_path"
    description = "The shortest chain of relationships linking two entities of a vendor's graph."

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()
        from_entity: str = entity_field()
        to_entity: str = entity_field()
        max_hops: int = Field(6, ge=1, le=20, description="longest path (1-20)")
        relationship_types: list[Word] | None = relationship_types_field()

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg = self.service.kg
        info = kg.vendor(args.vendor_name)
        found = kg.find_path(
            info,
            entity_ref(args.from_entity),
            entity_ref(args.to_entity),
            max_hops=args.max_hops,
            relationship_types=args.relationship_types,
        )
        return self.account(
            envelope(
                "find_entity_path",
                call.rid,
                path_result(info.name, found),
                elapsed_ms=call.elapsed_ms(),
                build_id=build,
            )
        )


class GetEntityNeighbors(_GraphQuestion):
    """Entities within ``depth`` relationships of an entity, closest first;
    relationships are dropped first, then the farthest neighbours, to fit the budget."""

    name = "get_entity_neighbors"
    description = "Entities within depth relationships of an entity, closest first."

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()
        entity: str = entity_field("name or id")
        depth: int = Field(1, ge=1, le=5, description="hops (1-5)")
        relationship_types: list[Word] | None = relationship_types_field()
        limit: int = Field(50, ge=1, le=500, description="most neighbours")

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg = self.service.kg
        info = kg.vendor(args.vendor_name)
        hood = kg.neighbors(
            info,
            entity_ref(args.entity),
            depth=args.depth,
            relationship_types=args.relationship_types,
            limit=args.limit,
        )
        neighbours, rels = neighbour_rows(hood), relationship_rows(hood)

        def build_env(n: int) -> dict[str, Any]:
            return envelope(
                "get_entity_neighbors",
                call.rid,
                {
                    "vendor_name": info.name,
                    "entity": {
                        "entity_id": hood.center.id,
                        "name": hood.center.name,
                        "entity_type": hood.center.type,
                    },
                    "depth": hood.depth,
                    "neighbors": neighbours[: min(n, len(neighbours))],
                    "relationships": rels[: max(0, n - len(neighbours))],
                    "truncated": hood.truncated,
                },
                elapsed_ms=call.elapsed_ms(),
                build_id=build,
            )

        return self.fit(build_env, len(neighbours) + len(rels), "neighbours")


def path_result(vendor_name: str, found: PathResult) -> dict[str, Any]:
    """The find_entity_path result: each step's entity and the relationship to the next."""
    steps = None
    if found.path_exists:
        steps = []
        for s in found.steps:
            rel = s.relationship_to_next
            steps.append(
                {
                    "entity_id": s.entity.id,
                    "name": s.entity.name,
                    "entity_type": s.entity.type,
                    "relationship_to_next": rel.type if rel else None,
                    "direction": None if rel is None else ("forward" if s.forward else "backward"),
                    "evidence": rel.evidence or None if rel else None,
                }
            )
    return {
        "vendor_name": vendor_name,
        "path_exists": found.path_exists,
        "hops": found.hops,
        "reason": found.reason or None,
        "path": steps,
    }


def neighbour_rows(hood: Neighbourhood) -> list[dict[str, Any]]:
    """The neighbours of get_entity_neighbors, closest first."""
    return [
        {"entity_id": e.id, "name": e.name, "entity_type": e.type, "distance": d}
        for e, d in hood.entities
    ]


def relationship_rows(hood: Neighbourhood) -> list[dict[str, Any]]:
    """The relationships among a neighbourhood's entities."""
    return [
        {
            "relationship_id": r.id,
            "source_id": r.source_id,
            "target_id": r.target_id,
            "relationship_type": r.type,
            "confidence": round(r.confidence, 3),
        }
        for r in hood.relationships
    ]


def entity_ref(text: str) -> int | str:
    """An entity id when ``text`` is one, else the name.

    >>> entity_ref(" 42 "), entity_ref("²"), entity_ref("Mesa")
    (42, '²', 'Mesa')
    """
    stripped = text.strip()
    # ASCII digits only: str.isdigit() also admits '²' and '①', which int() refuses
    decimal = stripped.isascii() and stripped.isdigit()
    return int(stripped) if decimal and len(stripped) < 19 else text
