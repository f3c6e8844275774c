"""JSON form of extraction results, as kept in ``extraction_cache``."""

from __future__ import annotations

from typing import Any

from extraction.models import EntityMention, ExtractionResult, RelationMention


def result_to_json(result: ExtractionResult) -> dict[str, Any]:
    return {
        "entities": [
            [e.text, e.label, e.start, e.end, e.canonical, e.source] for e in result.entities
        ],
        "relations": [
            [
                r.source,
                r.source_label,
                r.target,
                r.target_label,
                r.type,
                round(r.confidence, 4),
                r.sentence,
                list(r.source_span),
                list(r.target_span),
                r.method,
                *([r.detail] if r.detail else []),
            ]
            for r in result.relations
        ],
    }


def result_from_json(data: dict[str, Any]) -> ExtractionResult:
    entities = tuple(
        EntityMention(text=t, label=lb, start=s, end=e, canonical=c, source=src)
        for t, lb, s, e, c, src in data.get("entities", [])
    )
    relations = tuple(
        RelationMention(
            source=s,
            source_label=sl,
            target=t,
            target_label=tl,
            type=ty,
            confidence=cf,
            sentence=sent,
            source_span=(ss[0], ss[1]),
            target_span=(ts[0], ts[1]),
            method=m,
            detail=str(rest[0]) if rest else "",
        )
        for s, sl, t, tl, ty, cf, sent, ss, ts, m, *rest in data.get("relations", [])
    )
    return ExtractionResult(entities=entities, relations=relations)
