"""One vendor's graph as plain data: what goes in (a chunk's extraction result
with what places its spans) and what comes out (entities, mentions,
relationships and the problems worth telling a user)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from extraction.models import ExtractionResult


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

    def without(self, dropped: set[int]) -> VendorGraph:
        """The graph without the entities ``dropped`` (their mentions and edges with them)."""
        index: dict[int, int] = {}
        out = VendorGraph()
        for i, e in enumerate(self.entities):
            if i not in dropped:
                index[i] = len(out.entities)
                out.entities.append(e)
        out.mentions = [
            replace(m, entity=index[m.entity]) for m in self.mentions if m.entity in index
        ]
        out.relationships = [
            replace(r, source=index[r.source], target=index[r.target])
            for r in self.relationships
            if r.source in index and r.target in index
        ]
        out.problems = self.problems
        return out
