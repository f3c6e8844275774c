"""Result shapes per response mode, field filtering and desktop enhancements: pure
functions of search hits and graph answers.

Every number comes from a real signal:

- ``hybrid_score`` - the fused score (times its boosts) divided by the best one
  possible before boosts, first in both arms (1 for convex fusion, ``2 / (k + 1)``
  for RRF), capped at 1;
- ``confidence.score_reliability`` - 0.6 x agreement of the two arms (0 when only
  one found the chunk, 1 when both ranked it alike: ``1 - |ln(rv / rf)| / ln(depth)``)
  + 0.4 x the score margin over the next result (``(s - s_next) / s``);
- ``confidence.source_quality`` - the share of title, category, date, section
  header and a body of at least 32 tokens that the chunk has;
- ``confidence.recency`` - ``0.5 ** (age in years)`` of the note's date, null
  without one;
- ``ranking.percentile`` - the share of all results at or below this one; the
  explanation names the arms and their ranks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date
from typing import Any

from kg.analysis import CappedGraph, GraphStatistics
from kg.model import Entity, Relationship
from search.chunks import Chunk
from search.ranking import SearchHit
from server.errors import ErrorCode, ToolFailure
from server.settings import ResponseMode

SNIPPET_CHARS = 200

FIELDS: dict[str, tuple[str, ...]] = {
    "ids_only": ("chunk_id", "hybrid_score", "rank"),
    "metadata": ("source_file", "source_category", "vendor", "chunk_index", "total_chunks"),
    "preview": ("chunk_snippet", "context_header"),
    "full": ("chunk_text", "similarity_score", "bm25_score", "score_type", "chunk_token_count"),
}
ENHANCEMENTS = ("confidence", "ranking", "deduplication")
MODES: tuple[ResponseMode, ...] = ("ids_only", "metadata", "preview", "full")


def snippet(content: str, header: str) -> str:
    r"""The first 200 characters of a chunk's body (its header left out).

    >>> snippet("Acme > Pricing\n\nThe sled costs 4,000 dollars.", "Acme > Pricing")
    'The sled costs 4,000 dollars.'
    """
    body = content[len(header) :].strip() if header and content.startswith(header) else content
    return body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1] + "…"


def allowed_fields(mode: ResponseMode) -> tuple[str, ...]:
    """Fields a mode offers: its own and those of every lighter mode.

    >>> allowed_fields("metadata")[:4]
    ('chunk_id', 'hybrid_score', 'rank', 'source_file')
    """
    out: list[str] = []
    for m in MODES:
        out += FIELDS[m]
        if m == mode:
            break
    return tuple(out)


def check_fields(fields: Sequence[str] | None, mode: ResponseMode) -> tuple[str, ...] | None:
    """The requested fields, or INVALID_PARAMS naming the allowed ones."""
    if fields is None:
        return None
    allowed = allowed_fields(mode) + ENHANCEMENTS
    unknown = [f for f in fields if f not in allowed]
    if unknown:
        raise ToolFailure(
            ErrorCode.INVALID_PARAMS,
            f"Field(s) {', '.join(map(repr, unknown))} not available in {mode!r} mode. "
            f"Allowed: {', '.join(allowed)}.",
            {"allowed_fields": list(allowed)},
        )
    if not fields:
        raise ToolFailure(ErrorCode.INVALID_PARAMS, "fields is empty: omit it to get all fields.")
    return tuple(dict.fromkeys(fields))


def normalized_score(score: float, best: float) -> float:
    """The fused score over the best possible one (:func:`search.fusion.best_score`).

    >>> normalized_score(2 / 61, 2 / 61)
    1.0
    >>> normalized_score(0.25, 1.0)
    0.25
    """
    return round(min(1.0, score / best), 4)


def _agreement(hit: SearchHit, depth: int) -> float:
    if hit.vector_rank is None or hit.fulltext_rank is None:
        return 0.0
    spread = abs(math.log(hit.vector_rank / hit.fulltext_rank))
    return max(0.0, 1.0 - spread / math.log(max(depth, 2)))


def _explanation(hit: SearchHit) -> str:
    if hit.vector_rank is not None and hit.fulltext_rank is not None:
        strength = "Strong" if max(hit.vector_rank, hit.fulltext_rank) <= 10 else "Partial"
        return (
            f"{strength} semantic and keyword match "
            f"(vector #{hit.vector_rank}, full text #{hit.fulltext_rank})"
        )
    if hit.vector_rank is not None:
        return f"Semantic match only (vector #{hit.vector_rank}); no keyword overlap"
    return f"Keyword match only (full text #{hit.fulltext_rank}); not among the semantic neighbours"


def source_quality(hit: SearchHit) -> float:
    signals = (
        bool(hit.title.strip()),
        bool(hit.category),
        hit.doc_date is not None,
        bool(hit.context_header.strip()),
        hit.token_count >= 32,
    )
    return round(sum(signals) / len(signals), 3)


def recency(doc_date: date | None, today: date) -> float | None:
    """Half-life of one year.

    >>> recency(date(2024, 1, 1), date(2025, 1, 1))
    0.5
    """
    if doc_date is None:
        return None
    age = max(0, (today - doc_date).days) / 366
    return round(float(0.5**age), 3)


def search_item(
    hit: SearchHit,
    *,
    mode: ResponseMode,
    best: float,
    total: int,
    depth: int,
    next_score: float | None,
    today: date,
    desktop: bool,
    confidence: bool,
) -> dict[str, Any]:
    """One result in ``mode``, with desktop enhancements when asked."""
    item: dict[str, Any] = {
        "chunk_id": hit.chunk_id,
        "hybrid_score": normalized_score(hit.score, best),
        "rank": hit.rank,
    }
    if mode != "ids_only":
        item |= {
            "source_file": hit.source_path,
            "source_category": hit.category,
            "vendor": hit.vendor,
            "chunk_index": hit.chunk_index,
            "total_chunks": hit.total_chunks,
        }
    if mode in ("preview", "full"):
        item |= {
            "chunk_snippet": snippet(hit.content, hit.context_header),
            "context_header": hit.context_header,
        }
    if mode == "full":
        item |= {
            "chunk_text": hit.content,
            "similarity_score": (
                round(hit.vector_similarity, 4) if hit.vector_similarity is not None else None
            ),
            "bm25_score": round(hit.fulltext_score, 4) if hit.fulltext_score is not None else None,
            "score_type": "hybrid",
            "chunk_token_count": hit.token_count,
        }
    if desktop:
        if confidence:
            margin = 0.0
            if next_score is not None and hit.score > 0:
                margin = max(0.0, (hit.score - next_score) / hit.score)
            elif next_score is None:
                margin = 1.0 if total == 1 else 0.0
            item["confidence"] = {
                "score_reliability": round(
                    0.6 * _agreement(hit, depth) + 0.4 * min(1.0, margin), 3
                ),
                "source_quality": source_quality(hit),
                "recency": recency(hit.doc_date, today),
            }
        item["ranking"] = {
            "percentile": round(100 * (total - hit.rank + 1) / max(total, 1)),
            "explanation": _explanation(hit),
            "score_method": "hybrid",
        }
        item["deduplication"] = {
            "is_duplicate": False,
            "similar_chunk_ids": list(hit.similar_chunk_ids),
        }
    return item


def select_fields(item: dict[str, Any], fields: tuple[str, ...] | None) -> dict[str, Any]:
    if fields is None:
        return item
    return {k: item[k] for k in fields if k in item}


def visual_hints(
    items: Sequence[dict[str, Any]], mode: ResponseMode, show_confidence: bool
) -> dict[str, Any]:
    scores = [i["hybrid_score"] for i in items if i.get("hybrid_score") is not None]
    top = max(scores, default=0.0)
    categories = {i.get("source_category") for i in items if "source_category" in i}
    return {
        "highlight_top": max(1, sum(1 for s in scores if s >= 0.8 * top)) if scores else 0,
        "group_by": "source_category" if len(categories) > 1 else None,
        "show_confidence": show_confidence,
        "collapse_duplicates": any(
            i.get("deduplication", {}).get("similar_chunk_ids") for i in items
        ),
        "expandable_previews": mode in ("preview", "full"),
    }


# -- vendors -------------------------------------------------------------------


def entity_item(e: Entity, *, full: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "entity_id": e.id,
        "name": e.name,
        "entity_type": e.type,
        "confidence": round(e.confidence, 3),
        "mention_count": e.mention_count,
        "importance": e.importance,
        "snippet": (e.snippet or None) if full else None,
    }
    if e.external:
        item["external"] = True
    return item


def relationship_item(r: Relationship, *, full: bool) -> dict[str, Any]:
    meta: dict[str, Any] | None = None
    if full:
        meta = {"confidence": round(r.confidence, 3), "evidence": r.evidence or None}
        if r.metadata:
            meta["relationship_metadata"] = dict(r.metadata)
    item: dict[str, Any] = {
        "relationship_id": r.id,
        "source_id": r.source_id,
        "target_id": r.target_id,
        "relationship_type": r.type,
        "metadata": meta,
    }
    # the ends' names: the preview lists relationships touching its five entities
    # whose other end is not among them
    if r.source_name:
        item["source_name"] = r.source_name
    if r.target_name:
        item["target_name"] = r.target_name
    return item


def statistics_dict(stats: GraphStatistics) -> dict[str, Any]:
    d = stats.as_dict()
    d.pop("vendor", None)
    d.pop("top_entities", None)
    d.pop("last_updated", None)
    return d


def vendor_result(
    *,
    mode: ResponseMode,
    name: str,
    aliases: Sequence[str],
    stats: GraphStatistics,
    graph: CappedGraph | None,
    include_relationships: bool,
) -> dict[str, Any]:
    """find_vendor_info's answer in ``mode`` (``graph``: the capped graph for ids_only
    and full, the preview for preview)."""
    last = stats.last_updated.isoformat() if stats.last_updated else None
    out: dict[str, Any] = {"vendor_name": name, "aliases": list(aliases)}
    if mode == "ids_only":
        assert graph is not None
        out["entity_ids"] = [e.id for e in graph.entities]
        if include_relationships:
            out["relationship_ids"] = [r.id for r in graph.relationships]
        out["truncated"] = graph.truncated
        return out
    out["statistics"] = statistics_dict(stats)
    out["last_updated"] = last
    if mode == "metadata":
        out["top_entities"] = [
            {"entity_id": e.id, "name": e.name, "entity_type": e.type, "pagerank": e.pagerank}
            for e in stats.top_entities[:5]
        ]
        return out
    assert graph is not None
    full = mode == "full"
    out["entities"] = [entity_item(e, full=full) for e in graph.entities]
    if include_relationships:
        out["relationships"] = [relationship_item(r, full=full) for r in graph.relationships]
    out["truncated"] = graph.truncated
    out["total_entities"] = graph.total_entities
    out["total_relationships"] = graph.total_relationships
    return out


def chunk_item(chunk: Chunk, mode: ResponseMode) -> dict[str, Any]:
    """get_chunk's answer in ``mode``."""
    item: dict[str, Any] = {"chunk_id": chunk.chunk_id}
    if mode != "ids_only":
        item |= {
            "source_file": chunk.source_path,
            "source_category": chunk.category,
            "vendor": chunk.vendor,
            "title": chunk.title,
            "chunk_index": chunk.chunk_index,
            "total_chunks": chunk.total_chunks,
            "document_date": chunk.doc_date.isoformat() if chunk.doc_date else None,
        }
    if mode in ("preview", "full"):
        item |= {
            "context_header": chunk.context_header,
            "chunk_snippet": snippet(chunk.content, chunk.context_header),
        }
    if mode == "full":
        item |= {"chunk_text": chunk.content, "chunk_token_count": chunk.token_count}
    return item
