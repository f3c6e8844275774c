"""Circles of one relationship type, broken at their weakest edge (pure): a
product cannot be built on itself, however the notes' sentences chain."""

from __future__ import annotations

from extraction.graph.model import GraphRelationship


def break_cycles(
    relationships: list[GraphRelationship], rel_type: str
) -> tuple[list[GraphRelationship], list[GraphRelationship]]:
    """The relationships without the weakest edge of every circle of ``rel_type``
    (a product cannot be built on itself), and the edges left out."""
    kept = list(relationships)
    dropped: list[GraphRelationship] = []
    while True:
        typed = [r for r in kept if r.type == rel_type]
        cycle = _find_cycle(typed)
        if not cycle:
            return kept, dropped
        weakest = min(cycle, key=lambda r: (r.confidence, r.metadata.get("mentions", 1), -r.source))
        kept.remove(weakest)
        dropped.append(weakest)


def _find_cycle(edges: list[GraphRelationship]) -> list[GraphRelationship]:
    out: dict[int, list[GraphRelationship]] = {}
    for r in edges:
        out.setdefault(r.source, []).append(r)
    state: dict[int, int] = {}  # 1 on the stack, 2 done
    path: list[GraphRelationship] = []

    def visit(node: int) -> list[GraphRelationship]:
        state[node] = 1
        for r in out.get(node, []):
            if state.get(r.target) == 1:
                starts = [i for i, p in enumerate(path) if p.source == r.target]
                return [*path[starts[0] if starts else len(path) :], r]
            if r.target not in state:
                path.append(r)
                found = visit(r.target)
                if found:
                    return found
                path.pop()
        state[node] = 2
        return []

    for node in sorted(out):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []
