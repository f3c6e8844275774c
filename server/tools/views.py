"""What the web explorer asks that no MCP tool answers: a vendor's whole graph, an
entity's mentions and evidence, the note a chunk belongs to, a vendor's whole
lifecycle, the newest build.

Each view is declared like a tool (name, description, ``Arguments``) and answered
through the same frame (:mod:`server.service`: admission, read snapshot, caches,
metrics, the error envelope), but it is not published over MCP: its answers are
for a person's browser, not a model's context, so they are not cut to the token
budget. The explorer's ``/api/explorer/<name>`` routes are made from :data:`VIEWS`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import Field

from kg.evidence import read_evidence, read_mentions
from kg.paths import find_entity
from search.chunks import get_note
from server.envelope import envelope
from server.tools.arguments import ToolArguments, entity_field, vendor_name_field
from server.tools.base import Answer, Call, Keyed, Tool, vendor_key_name
from server.tools.graph import entity_ref
from server.tools.lifecycle import answer_day, cycle_item, product_item

#: The command that builds a knowledge base, for an empty one.
BUILD_COMMAND = "python -m extraction rebuild-graph PATH  (or: make explore)"


class VendorGraph(Tool):
    """A vendor's whole graph, every entity and relationship, compact: what the
    explorer draws when a person asks for more than the capped view."""

    name = "vendor_graph"
    description = "A vendor's whole graph: every entity and relationship, without evidence."

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()

    def key(self, build: int, args: Arguments) -> Keyed:
        return self.service.vendor_cache, (self.name, vendor_key_name(args.vendor_name))

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg = self.service.kg
        info = kg.vendor(args.vendor_name)
        g = kg.graph(info)
        entities = [
            {
                "entity_id": n,
                "name": a["name"],
                "entity_type": a["type"],
                "mention_count": a["mention_count"],
                **({"external": True} if a.get("external") else {}),
            }
            for n, a in g.nodes(data=True)
        ]
        relationships = [
            {
                "relationship_id": k,
                "source_id": u,
                "target_id": v,
                "relationship_type": a["type"],
                "confidence": round(a["confidence"], 3),
            }
            for u, v, k, a in g.edges(keys=True, data=True)
        ]
        # never read by a model: not counted in tokens (a large vendor's count
        # would cost more than reading its graph)
        return envelope(
            self.name,
            call.rid,
            {
                "vendor_name": info.name,
                "entities": entities,
                "relationships": relationships,
                "total_entities": len(entities),
                "total_relationships": len(relationships),
            },
            elapsed_ms=call.elapsed_ms(),
            build_id=build,
        )


class EntityEvidence(Tool):
    """Where an entity comes from: its mentions in the notes, each with its sentence
    and the chunk (section) it is in, and its relationships with the sentence each
    was read from."""

    name = "entity_evidence"
    description = (
        "An entity's mentions in the notes (sentence, section, note) and its relationships "
        "with their evidence sentences."
    )

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()
        entity: str = entity_field("name or id")
        limit: int = Field(20, ge=1, le=200, description="most mentions and relationships")

    def key(self, build: int, args: Arguments) -> Keyed:
        return self.service.vendor_cache, (
            self.name,
            vendor_key_name(args.vendor_name),
            args.entity.strip().casefold(),
            args.limit,
        )

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg = self.service.kg
        info = kg.vendor(args.vendor_name)
        g = kg.graph(info)
        node = find_entity(g, entity_ref(args.entity))
        attrs = g.nodes[node]
        with kg.snapshot() as conn:
            mentions, mention_total = read_mentions(conn, node, args.limit)
            evidence, relationship_total = read_evidence(conn, node, args.limit)
        return self.account(
            envelope(
                self.name,
                call.rid,
                {
                    "vendor_name": info.name,
                    "entity": {
                        "entity_id": node,
                        "name": attrs["name"],
                        "entity_type": attrs["type"],
                        "mention_count": attrs["mention_count"],
                        "aliases": list(attrs.get("aliases") or ()),
                        "snippet": attrs.get("snippet") or None,
                    },
                    "mentions": [asdict(m) for m in mentions],
                    "total_mentions": mention_total,
                    "relationships": [asdict(e) for e in evidence],
                    "total_relationships": relationship_total,
                },
                elapsed_ms=call.elapsed_ms(),
                build_id=build,
            )
        )


class Note(Tool):
    """The note one chunk belongs to, every chunk of it in reading order (each
    without the text it repeats of the one before): a fact's way back to its
    source. Notes are found by chunk id only, never by a path."""

    name = "note"
    description = "The whole note a chunk belongs to, section by section, found by chunk id."

    class Arguments(ToolArguments):
        chunk_id: int = Field(
            ge=1, description="any chunk of the note (from a search or a mention)"
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        return self.service.search_cache, (self.name, args.chunk_id)

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        with self.service.kg.snapshot() as conn:
            chunks = get_note(conn, args.chunk_id)
        first = chunks[0]
        return self.account(
            envelope(
                self.name,
                call.rid,
                {
                    "chunk_id": args.chunk_id,
                    "title": first.title,
                    "vendor": first.vendor,
                    "source_file": first.source_path,
                    "source_category": first.category,
                    "document_date": first.doc_date.isoformat() if first.doc_date else None,
                    "sections": [
                        {
                            "chunk_id": c.chunk_id,
                            "chunk_index": c.chunk_index,
                            "context_header": c.context_header,
                            "text": c.new_text,
                        }
                        for c in chunks
                    ],
                },
                elapsed_ms=call.elapsed_ms(),
                build_id=build,
            )
        )


class LifecycleTimeline(Tool):
    """Every product of a vendor with every release cycle, as of a date: what the
    lifecycle page draws. The items are get_lifecycle's own (its preview mode),
    unpaged and not cut to the token budget: the vendor with the most cycles in
    the shared corpus has more products than fit the budget in any mode that
    lists them, so get_lifecycle cannot answer it whole."""

    name = "lifecycle_timeline"
    description = "Every product and release cycle of a vendor as of a date, for timelines."

    class Arguments(ToolArguments):
        vendor_name: str = vendor_name_field()
        as_of: str | None = Field(
            None,
            min_length=1,
            max_length=40,
            description="the date the support status is for, YYYY-MM-DD (default today)",
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        day = answer_day(args.as_of)
        return self.service.vendor_cache, (self.name, vendor_key_name(args.vendor_name), day)

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        answer = self.service.kg.lifecycle(args.vendor_name, as_of=answer_day(args.as_of))
        products = [
            {
                **product_item(p, "preview"),
                "cycles": [cycle_item(p, c, "preview") for c in p.cycles],
            }
            for p in answer.products
        ]
        return self.account(
            envelope(
                self.name,
                call.rid,
                {
                    "vendor": answer.vendor,
                    "as_of": answer.as_of.isoformat(),
                    "products": products,
                    "cycle_count": sum(len(p["cycles"]) for p in products),
                },
                elapsed_ms=call.elapsed_ms(),
                message=None if products else "no release cycles in this vendor's notes",
                build_id=build,
            )
        )


class NewestBuild(Tool):
    """The newest complete knowledge-base build and when it finished; the explorer
    polls it to say "updated just now" when a rebuild lands. Never cached."""

    name = "newest_build"
    description = "The newest complete knowledge-base build: its id and when it finished."

    class Arguments(ToolArguments):
        pass

    def answer(self, call: Call, args: Arguments) -> Answer:
        kg = self.service.kg
        with kg.snapshot():
            build, finished = kg.build_id(), kg.last_updated()
        message = None if build else f"No knowledge base build yet: run {BUILD_COMMAND}."
        env = envelope(
            self.name,
            call.rid,
            {
                "graph_build_id": build,
                "finished_at": finished.isoformat() if finished else None,
            },
            elapsed_ms=call.elapsed_ms(),
            message=message,
            build_id=build,
        )
        return Answer(self.account(env))


#: every view the explorer's ``/api/explorer/`` answers
VIEWS: tuple[type[Tool], ...] = (
    VendorGraph,
    EntityEvidence,
    Note,
    LifecycleTimeline,
    NewestBuild,
)
