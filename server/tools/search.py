"""``semantic_search`` and ``get_chunk``: the notes' chunks, found and fetched."""

from __future__ import annotations

from datetime import date
from typing import Any, NamedTuple

from pydantic import Field

from search.chunks import get_chunk
from search.fusion import best_score
from search.hybrid import SearchResult, ranked_hits
from server.cursor import digest
from server.envelope import envelope, warning
from server.models import SearchEnvelope
from server.settings import ResponseMode
from server.shaping import check_fields, chunk_item, search_item, select_fields, visual_hints
from server.tools.arguments import (
    MAX_QUERY_CHARS,
    ToolArguments,
    Word,
    cursor_field,
    response_mode_field,
)
from server.tools.base import Answer, Call, Keyed, Tool


class _Request(NamedTuple):
    mode: ResponseMode
    fields: tuple[str, ...] | None  # shown; None: all of the mode's
    size: int  # results per page
    bound: str  # the digest cursors and cache entries are bound to


class SemanticSearch(Tool):
    """Hybrid search, paged, within the token budget.

    Two caches: the ranked hits of a query (every page and mode of it reads
    them) and each whole answer. The search statement reads its graph build
    itself, so no read snapshot is opened; when a rebuild landed after the
    newest build the server knew of, the answer, its cursors and its cache entry
    belong to the build the search read.
    """

    name = "semantic_search"
    description = (
        "Hybrid search (vector + full text, Reciprocal Rank Fusion) over the vendor notes. "
        "Returns ranked chunks with scores, source file and category and chunk position; "
        "more per result in heavier modes. Paginate with page_size and cursor."
    )
    Envelope = SearchEnvelope
    snapshot = False

    class Arguments(ToolArguments):
        query: str = Field(
            min_length=1,
            max_length=MAX_QUERY_CHARS,
            description="What to look for: natural language or keywords (1-500 characters); "
            '"quoted phrases" and -word narrow the keyword side.',
        )
        top_k: int | None = Field(
            None, ge=1, le=50, description="results per response (1-50, default 10)"
        )
        response_mode: ResponseMode | None = response_mode_field(
            "ids_only (~10 tokens/result), metadata (default), preview (adds a 200-character "
            "snippet and the section header) or full (adds the text and both arm scores)"
        )
        fields: list[Word] | None = Field(
            None,
            max_length=20,
            description="only these result fields (must exist in the chosen mode)",
        )
        page_size: int | None = Field(
            None, ge=1, le=50, description="results per page; replaces top_k"
        )
        cursor: str | None = cursor_field()
        group_by_note: bool = Field(
            True,
            description="one result per note, its other matching chunks listed behind it "
            "(deduplication.similar_chunk_ids; default true); false: every matching chunk",
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        bound = self._request(args).bound
        return self.service.search_cache, ("answer", bound, self.offset(args.cursor, bound, build))

    def _request(self, args: Arguments) -> _Request:
        mode = self.mode(args.response_mode)
        wanted = check_fields(args.fields, mode)
        size = args.page_size or args.top_k or 10
        return _Request(
            mode,
            wanted,
            size,
            digest(
                {
                    "q": args.query,
                    "mode": mode,
                    "fields": wanted,
                    "size": size,
                    "notes": args.group_by_note,
                }
            ),
        )

    def answer(self, call: Call, args: Arguments) -> Answer:
        service, search_settings = self.service, self.service.search_settings
        query, cursor = args.query, args.cursor
        mode, wanted, size, bound = self._request(args)
        superseded = args.page_size is not None and args.top_k is not None
        build = service.newest_build()
        offset = self.offset(cursor, bound, build)
        answer_key = ("answer", bound, offset)
        cached_env = service.search_cache.get(answer_key, build)
        if cached_env is not None:
            return Answer(service.reuse(cached_env, call), True)
        key = ("search", query, args.group_by_note)
        found: SearchResult | None = service.search_cache.get(key, build)
        cache_hit = found is not None
        if found is None:
            if args.group_by_note != search_settings.distinct_notes:
                search_settings = search_settings.model_copy(
                    update={"distinct_notes": args.group_by_note}
                )
            found = ranked_hits(
                query, db=service.search_pool, embedder=service.embedder, settings=search_settings
            )
            if found.build_id is not None and found.build_id != build:
                # a rebuild landed meanwhile: the hits, their pages and cursors
                # belong to the build the search read
                build = found.build_id
                offset = self.offset(cursor, bound, build)
                answer_key = ("answer", bound, offset)
            service.search_cache.put(key, build, found)
        hits = found.hits
        page = hits[offset : offset + size]
        desktop = self.settings.enable_desktop_enhancements
        confidence = desktop and self.settings.include_confidence_scores
        today = date.today()
        items = [
            search_item(
                h,
                mode=mode,
                best=best_score(search_settings.fusion, search_settings.rrf_k),
                total=len(hits),
                depth=search_settings.candidates,
                next_score=hits[h.rank].score if h.rank < len(hits) else None,
                today=today,
                # ids_only stays lean: the enhancements cost more than the ids
                desktop=desktop and mode != "ids_only",
                confidence=confidence,
            )
            for h in page
        ]
        # 0.5 is first in one arm only (before boosts): nothing above it means no chunk was
        # found by both meaning and keywords
        threshold = self.settings.low_quality_threshold
        low = bool(items) and all(i["hybrid_score"] <= threshold for i in items)
        shown = [select_fields(i, wanted) for i in items]
        warnings = []
        if superseded:
            warnings.append(
                warning(
                    "warning",
                    "DEPRECATED_PARAMETER",
                    f"top_k={args.top_k} is ignored: page_size={args.page_size} replaces it.",
                    "Give page_size (and cursor) only.",
                )
            )
        if low:
            warnings.append(
                warning(
                    "info",
                    "LOW_QUALITY_RESULTS",
                    f"No result scores above {threshold} (no chunk ranks high in both the "
                    "semantic and the keyword arm).",
                    "Rephrase the query with the words the notes would use, or add the "
                    "vendor's name.",
                )
            )
        message = None
        if not hits:
            message = found.empty_reason
        elif not page:
            message = f"offset {offset} is past the last of {len(hits)} results"

        def build_env(n: int) -> dict[str, Any]:
            return envelope(
                "semantic_search",
                call.rid,
                shown[:n],
                elapsed_ms=call.elapsed_ms(),
                cache_hit=cache_hit,
                pagination=self.pagination(offset, n, len(hits), size, bound, build),
                warnings=warnings,
                message=message,
                visual_hints=(
                    visual_hints(items[:n], mode, confidence)
                    if desktop and mode != "ids_only"
                    else None
                ),
                cache_key=f"search:{mode}:{bound}",
                build_id=build,
            )

        env = self.fit(build_env, len(shown), "results", shown)
        service.search_cache.put(answer_key, build, env)
        return Answer(env, cache_hit)


class GetChunk(Tool):
    """One chunk by id, by default in full: the step after a light search."""

    name = "get_chunk"
    description = "One chunk by id, by default in full: the step after a light search."

    class Arguments(ToolArguments):
        chunk_id: int = Field(ge=1, description="chunk_id from semantic_search")
        response_mode: ResponseMode = response_mode_field(
            "ids_only, metadata, preview or full (default: the chunk's whole text)", "full"
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        return self.service.search_cache, ("chunk", args.chunk_id, args.response_mode)

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        with self.service.kg.snapshot() as conn:
            chunk = get_chunk(conn, args.chunk_id)
        item = chunk_item(chunk, args.response_mode)

        def build_env(n: int) -> dict[str, Any]:
            shown = dict(item)
            if n == 0 and "chunk_text" in shown:
                shown["chunk_text"] = None  # the one thing that can be too big
            return envelope(
                "get_chunk", call.rid, [shown], elapsed_ms=call.elapsed_ms(), build_id=build
            )

        return self.fit(build_env, 1, "chunk text")
