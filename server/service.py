"""What the tools do, independent of MCP: authenticate, rate-limit, cache, call
``search`` / ``kg``, shape the answer into the envelope within the token budget.

Every public method takes the caller's API key and returns ``(envelope,
is_error)``; expected failures become error envelopes with the contract's
codes, and a bug becomes SEARCH_FAILED with the request id (its traceback goes
to the server log, never to the client).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from kg.settings import GraphSettings
from kg.store import KnowledgeGraph
from search.chunks import get_chunk
from search.fusion import best_score
from search.hybrid import SearchResult, ranked_hits, search_pool
from search.settings import SearchSettings
from server.auth import Gate, KeyStore
from server.builds import BuildWatcher
from server.cache import TTLCache
from server.cursor import CursorCodec, CursorError, digest
from server.envelope import (
    account,
    dumps,
    envelope,
    fit,
    reaccount,
    request_id,
    timestamp,
    warning,
)
from server.errors import ErrorCode, ToolFailure, failure_from
from server.metrics import Metrics
from server.replicas import ReplicaBoard, replica_name
from server.settings import ResponseMode, ServerSettings
from server.shaping import (
    check_fields,
    chunk_item,
    search_item,
    select_fields,
    vendor_result,
    visual_hints,
)
from sql.database import Database

log = logging.getLogger("server")

Outcome = tuple[dict[str, Any], bool]


@dataclass
class _Answer:
    env: dict[str, Any]
    cache_hit: bool = False


class Service:
    """The server's state: pool, models, caches, limiter, keys, metrics."""

    def __init__(
        self,
        settings: ServerSettings,
        db: Database,
        *,
        embedder: Any,
        search_settings: SearchSettings | None = None,
        graph_settings: GraphSettings | None = None,
        pool_size: int = 4,
        watch_builds: bool = True,
        port: int | None = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.pool = db.pool(min_size=1, max_size=pool_size)
        self.embedder = embedder
        self.search_settings = search_settings or SearchSettings()
        # searches run on connections started with their settings (one statement
        # each); a search reads the graph build it belongs to in its own snapshot
        self.search_pool = search_pool(db, self.search_settings, max_size=pool_size)
        self.kg = KnowledgeGraph(self.pool, graph_settings)
        # keys, their revocation, the cursor secret and the rate-limit buckets are
        # shared through the database with every other replica (server.auth)
        self.keys = KeyStore(db)
        self.cursors = CursorCodec(self.keys.cursor_secret())
        self.search_cache = TTLCache(settings.search_cache_ttl, settings.cache_max_entries)
        self.vendor_cache = TTLCache(settings.vendor_cache_ttl, settings.cache_max_entries)
        self.gate = Gate(
            db,
            {
                "minute": settings.rate_limit_minute,
                "hour": settings.rate_limit_hour,
                "day": settings.rate_limit_day,
            },
        )
        self.metrics = Metrics()
        # every replica's own metrics, shared through the database (server.replicas)
        self.replicas = ReplicaBoard(
            db, replica_name(settings.replica_name, port), self._replica_metrics
        )
        # the cache key each cached tool's answer is kept under (see cached())
        self._keyers: dict[str, Callable[..., tuple[TTLCache, Hashable]]] = {
            "semantic_search": self._search_key,
            "find_vendor_info": self._vendor_key,
            "list_vendors": self._vendors_key,
            "get_chunk": self._chunk_key,
            "find_entity_path": self._path_key,
            "get_entity_neighbors": self._neighbors_key,
        }
        # knows the newest graph build without a query, so cached answers need none
        self.builds = BuildWatcher(db) if watch_builds else None

    def close(self) -> None:
        self.replicas.close()
        if self.builds is not None:
            self.builds.close()
        self.search_pool.close()
        self.gate.close()
        self.pool.close()

    # -- the frame every tool runs in ------------------------------------------

    def run(
        self,
        operation: str,
        api_key: str | None,
        handler: Callable[[str, float], _Answer],
        *,
        snapshot: bool = True,
    ) -> Outcome:
        """Auth, rate limit, then ``handler`` inside one read snapshot of the
        knowledge base (``snapshot``): the answer comes from exactly one graph build,
        the one its ``graph_build_id`` names, even while a rebuild commits."""
        start = time.perf_counter()
        rid = request_id()
        cache_hit = False
        error: str | None = None
        try:
            self.gate.admit(api_key)
            if snapshot:
                with self.kg.snapshot():
                    answer = handler(rid, start)
            else:
                answer = handler(rid, start)
            cache_hit = answer.cache_hit
            return answer.env, False
        except Exception as exc:
            failure = failure_from(exc)
            if failure is None:
                log.exception("%s failed unexpectedly (request %s)", operation, rid)
                failure = ToolFailure(
                    ErrorCode.SEARCH_FAILED,
                    f"Unexpected server error ({type(exc).__name__}); the server log has "
                    f"request {rid}.",
                )
            error = failure.code.value
            return self._error(operation, rid, start, failure), True
        finally:
            self.metrics.record(
                operation, (time.perf_counter() - start) * 1000, cache_hit=cache_hit, error=error
            )

    # -- answers from memory ---------------------------------------------------------

    def cached(
        self, operation: str, api_key: str | None, arguments: Mapping[str, Any]
    ) -> Outcome | None:
        """The cached whole answer to ``operation(api_key, **arguments)``, or None.

        For the event loop: no I/O, microseconds. It looks up exactly the cache
        entry the full call would, for the newest build as the watcher knows it;
        None when that build is not known for sure (no watcher, database
        unreachable), nothing is cached, or the request is invalid (the full call
        then reports it). A hit is authenticated and rate-limited like any call.
        """
        keyer = self._keyers.get(operation)
        build = self.builds.current() if self.builds is not None else None
        if keyer is None or build is None:
            return None
        try:
            cache, key = keyer(build, **arguments)
        except (ToolFailure, TypeError):
            return None
        env = cache.get(key, build, count_miss=False)
        if env is None:
            return None
        return self.run(
            operation,
            api_key,
            lambda rid, start: _Answer(self._reuse(env, rid, start), True),
            snapshot=False,
        )

    def answer(
        self,
        operation: str,
        api_key: str | None,
        arguments: Mapping[str, Any],
        *,
        looked_up: bool = False,
    ) -> Outcome:
        """``operation(api_key, **arguments)``, whose cached answer (see :meth:`cached`)
        is looked up first unless ``looked_up`` already: a hit needs no database
        connection, so under load it does not wait for the pool behind fresh calls."""
        hit = None if looked_up else self.cached(operation, api_key, arguments)
        if hit is not None:
            return hit
        method: Callable[..., Outcome] = getattr(self, operation)
        return method(api_key, **arguments)

    def _through_cache(
        self,
        keyed: tuple[TTLCache, Hashable],
        build: int,
        rid: str,
        start: float,
        compute: Callable[[], dict[str, Any]],
    ) -> _Answer:
        """The cached answer for ``keyed`` on ``build``, or ``compute()``'s, kept."""
        cache, key = keyed
        hit = cache.get(key, build)
        if hit is not None:
            return _Answer(self._reuse(hit, rid, start), True)
        env = compute()
        cache.put(key, build, env)
        return _Answer(env)

    def _chunk_key(
        self, build: int, chunk_id: int, response_mode: ResponseMode = "full"
    ) -> tuple[TTLCache, tuple[str, int, str]]:
        return self.search_cache, ("chunk", chunk_id, response_mode)

    def _path_key(
        self,
        build: int,
        vendor_name: str,
        from_entity: str,
        to_entity: str,
        max_hops: int = 6,
        relationship_types: Sequence[str] | None = None,
    ) -> tuple[TTLCache, Hashable]:
        return self._graph_key(
            "path", vendor_name, relationship_types, from_entity, to_entity, max_hops
        )

    def _neighbors_key(
        self,
        build: int,
        vendor_name: str,
        entity: str,
        depth: int = 1,
        relationship_types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> tuple[TTLCache, Hashable]:
        return self._graph_key("neighbors", vendor_name, relationship_types, entity, depth, limit)

    def _graph_key(
        self,
        kind: str,
        vendor_name: str,
        relationship_types: Sequence[str] | None,
        *rest: Hashable,
    ) -> tuple[TTLCache, Hashable]:
        types = tuple(relationship_types) if relationship_types is not None else None
        return self.vendor_cache, (kind, _vendor_key_name(vendor_name), types, *rest)

    def _search_key(
        self,
        build: int,
        query: str,
        top_k: int | None = None,
        response_mode: ResponseMode | None = None,
        fields: Sequence[str] | None = None,
        page_size: int | None = None,
        cursor: str | None = None,
    ) -> tuple[TTLCache, tuple[str, str, int]]:
        bound = self._search_request(query, top_k, response_mode, fields, page_size)[3]
        return self.search_cache, ("answer", bound, self._offset(cursor, bound, build))

    def _search_request(
        self,
        query: str,
        top_k: int | None,
        response_mode: ResponseMode | None,
        fields: Sequence[str] | None,
        page_size: int | None,
    ) -> tuple[ResponseMode, tuple[str, ...] | None, int, str]:
        """Mode, fields shown, page size, and the digest cursors and caches bind to."""
        mode = self._mode(response_mode)
        wanted = check_fields(fields, mode)
        size = page_size or top_k or 10
        return (
            mode,
            wanted,
            size,
            digest({"q": query, "mode": mode, "fields": wanted, "size": size}),
        )

    def _vendor_key(
        self,
        build: int,
        vendor_name: str,
        response_mode: ResponseMode | None = None,
        include_relationships: bool = True,
    ) -> tuple[TTLCache, tuple[str, str, str, bool]]:
        mode = self._mode(response_mode)
        return self.vendor_cache, (
            "vendor",
            _vendor_key_name(vendor_name),
            mode,
            include_relationships,
        )

    def _vendors_key(
        self, build: int, page_size: int = 20, cursor: str | None = None
    ) -> tuple[TTLCache, tuple[str, str, int]]:
        bound = _vendors_bound(page_size)
        return self.vendor_cache, ("vendors", bound, self._offset(cursor, bound, build))

    def _error(
        self, operation: str, rid: str, start: float, failure: ToolFailure
    ) -> dict[str, Any]:
        warnings = []
        if failure.details.get("warning") == "TOKEN_LIMIT_EXCEEDED":
            warnings.append(
                warning(
                    "error",
                    "TOKEN_LIMIT_EXCEEDED",
                    failure.message,
                    "Use 'ids_only' or 'metadata' mode, fewer fields or a smaller page_size.",
                )
            )
        env = envelope(
            operation,
            rid,
            [],
            elapsed_ms=(time.perf_counter() - start) * 1000,
            status="error",
            message=failure.message,
            warnings=warnings,
            error={
                "code": failure.code.value,
                "message": failure.message,
                "action": failure.action,
                "details": failure.details,
            },
        )
        account(env, compact=self.settings.enable_response_compression)
        return env

    def _reuse(self, env: dict[str, Any], rid: str, start: float) -> dict[str, Any]:
        """A cached answer as this call's envelope: its own id, time and token count."""
        meta, ctx = env["_metadata"], env["execution_context"]
        fresh = dict(env)
        fresh["_metadata"] = dict(meta) | {"request_id": rid, "timestamp": timestamp()}
        fresh["execution_context"] = dict(ctx) | {
            "request_id": rid,
            "cache_hit": True,
            "execution_time_ms": round((time.perf_counter() - start) * 1000, 3),
        }
        new_meta, new_ctx = fresh["_metadata"], fresh["execution_context"]
        reaccount(
            fresh,
            ctx["tokens_estimated"],
            [
                (meta["request_id"], new_meta["request_id"]),
                (meta["timestamp"], new_meta["timestamp"]),
                (ctx["request_id"], new_ctx["request_id"]),
                (ctx["cache_hit"], new_ctx["cache_hit"]),
                (ctx["execution_time_ms"], new_ctx["execution_time_ms"]),
            ],
            compact=self.settings.enable_response_compression,
        )
        return fresh

    def _mode(self, mode: ResponseMode | None) -> ResponseMode:
        return mode or self.settings.default_response_mode

    def _desktop(self) -> tuple[bool, bool]:
        desktop = self.settings.enable_desktop_enhancements
        return desktop, desktop and self.settings.include_confidence_scores

    def _fit(
        self,
        build: Callable[[int], dict[str, Any]],
        count: int,
        what: str,
        items: Sequence[Any] | None = None,
    ) -> tuple[dict[str, Any], int]:
        return fit(
            build,
            count,
            budget=self.settings.max_tokens_per_response,
            threshold=self.settings.token_warning_threshold,
            compact=self.settings.enable_response_compression,
            what=what,
            sizes=None if items is None else [len(dumps(i)) for i in items],
        )

    def _pagination(
        self, offset: int, n: int, total: int, size: int, bound: str, build_id: int
    ) -> dict[str, Any]:
        """The pagination block of a page of ``n`` results starting at ``offset``."""
        has_more = offset + n < total
        return {
            "cursor": (
                self.cursors.encode(offset=offset + n, bound=bound, build_id=build_id)
                if has_more
                else None
            ),
            "page_size": size,
            "has_more": has_more,
            "total_available": total,
            "returned_count": n,
        }

    def _offset(self, cursor: str | None, bound: str, build_id: int) -> int:
        if cursor is None:
            return 0
        try:
            return self.cursors.decode(cursor, bound=bound, build_id=build_id)
        except CursorError as exc:
            raise ToolFailure(ErrorCode.INVALID_PARAMS, str(exc)) from None

    # -- semantic_search ---------------------------------------------------------

    def semantic_search(
        self,
        api_key: str | None,
        *,
        query: str,
        top_k: int | None = None,
        response_mode: ResponseMode | None = None,
        fields: Sequence[str] | None = None,
        page_size: int | None = None,
        cursor: str | None = None,
    ) -> Outcome:
        def handler(rid: str, start: float) -> _Answer:
            mode, wanted, size, bound = self._search_request(
                query, top_k, response_mode, fields, page_size
            )
            superseded = page_size is not None and top_k is not None
            build = self._newest_build()
            offset = self._offset(cursor, bound, build)
            answer_key = ("answer", bound, offset)
            cached_env = self.search_cache.get(answer_key, build)
            if cached_env is not None:
                return _Answer(self._reuse(cached_env, rid, start), True)
            key = ("search", query)
            found: SearchResult | None = self.search_cache.get(key, build)
            cache_hit = found is not None
            if found is None:
                found = ranked_hits(
                    query,
                    db=self.search_pool,
                    embedder=self.embedder,
                    settings=self.search_settings,
                )
                if found.build_id is not None and found.build_id != build:
                    # a rebuild landed meanwhile: the hits, their pages and cursors
                    # belong to the build the search read
                    build = found.build_id
                    offset = self._offset(cursor, bound, build)
                    answer_key = ("answer", bound, offset)
                self.search_cache.put(key, build, found)
            hits = found.hits
            page = hits[offset : offset + size]
            desktop, confidence = self._desktop()
            today = date.today()
            items = [
                search_item(
                    h,
                    mode=mode,
                    best=best_score(self.search_settings.fusion, self.search_settings.rrf_k),
                    total=len(hits),
                    depth=self.search_settings.candidates,
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
            low = bool(items) and all(
                i["hybrid_score"] <= self.settings.low_quality_threshold for i in items
            )
            shown = [select_fields(i, wanted) for i in items]

            def build_env(n: int) -> dict[str, Any]:
                warnings = []
                if superseded:
                    warnings.append(
                        warning(
                            "warning",
                            "DEPRECATED_PARAMETER",
                            f"top_k={top_k} is ignored: page_size={page_size} replaces it.",
                            "Give page_size (and cursor) only.",
                        )
                    )
                if low:
                    warnings.append(
                        warning(
                            "info",
                            "LOW_QUALITY_RESULTS",
                            f"No result scores above {self.settings.low_quality_threshold} "
                            "(no chunk ranks high in both the semantic and the keyword arm).",
                            "Rephrase the query with the words the notes would use, or add "
                            "the vendor's name.",
                        )
                    )
                message = None
                if not hits:
                    message = found.empty_reason
                elif not page:
                    message = f"offset {offset} is past the last of {len(hits)} results"
                return envelope(
                    "semantic_search",
                    rid,
                    shown[:n],
                    elapsed_ms=(time.perf_counter() - start) * 1000,
                    cache_hit=cache_hit,
                    pagination=self._pagination(offset, n, len(hits), size, bound, build),
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

            env, _ = self._fit(build_env, len(shown), "results", shown)
            self.search_cache.put(answer_key, build, env)
            return _Answer(env, cache_hit)

        # no read snapshot: the search statement reads its graph build itself
        return self.run("semantic_search", api_key, handler, snapshot=False)

    def _newest_build(self) -> int:
        """The newest complete graph build: the watcher's, or the database's."""
        build = self.builds.current() if self.builds is not None else None
        return build if build is not None else self.kg.build_id()

    # -- find_vendor_info ----------------------------------------------------------

    def find_vendor_info(
        self,
        api_key: str | None,
        *,
        vendor_name: str,
        response_mode: ResponseMode | None = None,
        include_relationships: bool = True,
    ) -> Outcome:
        mode = self._mode(response_mode)

        def handler(rid: str, start: float) -> _Answer:
            build = self.kg.build_id()
            keyed = self._vendor_key(build, vendor_name, response_mode, include_relationships)
            return self._through_cache(keyed, build, rid, start, lambda: answer(rid, start, build))

        def answer(rid: str, start: float, build: int) -> dict[str, Any]:
            info = self.kg.vendor(vendor_name)
            stats = self.kg.statistics(info)
            graph = None
            if mode in ("ids_only", "full"):
                graph = self.kg.capped(info)
            elif mode == "preview":
                graph = self.kg.preview(info)
            result = vendor_result(
                mode=mode,
                name=info.name,
                aliases=info.aliases,
                stats=stats,
                graph=graph,
                include_relationships=include_relationships,
            )
            entities = list(result.get("entities") or result.get("entity_ids") or [])
            rel_key = "relationships" if "relationships" in result else "relationship_ids"
            relationships = list(result.get(rel_key) or [])
            entity_key = "entities" if "entities" in result else "entity_ids"

            def build_env(n: int) -> dict[str, Any]:
                # relationships are dropped first, then entities
                shown = dict(result)
                if entity_key in result:
                    shown[entity_key] = entities[: min(len(entities), n)]
                if rel_key in result:
                    shown[rel_key] = relationships[: max(0, n - len(entities))]
                return envelope(
                    "find_vendor_info",
                    rid,
                    shown,
                    elapsed_ms=(time.perf_counter() - start) * 1000,
                    cache_key=f"vendor:{_vendor_key_name(vendor_name)}:{mode}:"
                    f"{include_relationships}",
                    build_id=build,
                )

            return self._fit(
                build_env,
                len(entities) + len(relationships),
                "entities and relationships",
                entities + relationships,
            )[0]

        return self.run("find_vendor_info", api_key, handler)

    # -- get_chunk ---------------------------------------------------------------

    def get_chunk(
        self, api_key: str | None, *, chunk_id: int, response_mode: ResponseMode = "full"
    ) -> Outcome:
        def handler(rid: str, start: float) -> _Answer:
            build = self.kg.build_id()
            keyed = self._chunk_key(build, chunk_id, response_mode)
            return self._through_cache(keyed, build, rid, start, lambda: answer(rid, start, build))

        def answer(rid: str, start: float, build: int) -> dict[str, Any]:
            with self.kg.snapshot() as conn:
                chunk = get_chunk(conn, chunk_id)
            item = chunk_item(chunk, response_mode)

            def build_env(n: int) -> dict[str, Any]:
                shown = dict(item)
                if n == 0 and "chunk_text" in shown:
                    shown["chunk_text"] = None  # the one thing that can be too big
                return envelope(
                    "get_chunk",
                    rid,
                    [shown],
                    elapsed_ms=(time.perf_counter() - start) * 1000,
                    build_id=build,
                )

            return self._fit(build_env, 1, "chunk text")[0]

        return self.run("get_chunk", api_key, handler)

    # -- list_vendors ----------------------------------------------------------------

    def list_vendors(
        self,
        api_key: str | None,
        *,
        page_size: int = 20,
        cursor: str | None = None,
    ) -> Outcome:
        def handler(rid: str, start: float) -> _Answer:
            build = self.kg.build_id()
            keyed = self._vendors_key(build, page_size, cursor)
            return self._through_cache(keyed, build, rid, start, lambda: answer(rid, start, build))

        def answer(rid: str, start: float, build: int) -> dict[str, Any]:
            bound = _vendors_bound(page_size)
            offset = self._offset(cursor, bound, build)
            page = self.kg.list_vendors(limit=page_size, offset=offset)
            rows = [
                {
                    "vendor_name": v.name,
                    "aliases": list(v.aliases),
                    "document_count": v.document_count,
                    "chunk_count": v.chunk_count,
                    "entity_count": v.entity_count,
                    "relationship_count": v.relationship_count,
                    "last_updated": v.last_updated.isoformat() if v.last_updated else None,
                }
                for v in page.vendors
            ]

            def build_env(n: int) -> dict[str, Any]:
                return envelope(
                    "list_vendors",
                    rid,
                    rows[:n],
                    elapsed_ms=(time.perf_counter() - start) * 1000,
                    pagination=self._pagination(offset, n, page.total, page_size, bound, build),
                    message=None if page.total else "the knowledge base has no vendors yet",
                    cache_key=f"vendors:{bound}:{offset}",
                    build_id=build,
                )

            return self._fit(build_env, len(rows), "vendors")[0]

        return self.run("list_vendors", api_key, handler)

    # -- graph questions ---------------------------------------------------------------

    def find_entity_path(
        self,
        api_key: str | None,
        *,
        vendor_name: str,
        from_entity: str,
        to_entity: str,
        max_hops: int = 6,
        relationship_types: Sequence[str] | None = None,
    ) -> Outcome:
        def handler(rid: str, start: float) -> _Answer:
            build = self.kg.build_id()
            keyed = self._path_key(
                build, vendor_name, from_entity, to_entity, max_hops, relationship_types
            )
            return self._through_cache(keyed, build, rid, start, lambda: answer(rid, start, build))

        def answer(rid: str, start: float, build: int) -> dict[str, Any]:
            info = self.kg.vendor(vendor_name)
            found = self.kg.find_path(
                info,
                _entity_ref(from_entity),
                _entity_ref(to_entity),
                max_hops=max_hops,
                relationship_types=relationship_types,
            )
            result = {
                "vendor_name": info.name,
                "path_exists": found.path_exists,
                "hops": found.hops,
                "reason": found.reason or None,
                "path": [
                    {
                        "entity_id": s.entity.id,
                        "name": s.entity.name,
                        "entity_type": s.entity.type,
                        "relationship_to_next": (
                            s.relationship_to_next.type if s.relationship_to_next else None
                        ),
                        "direction": (
                            None
                            if s.relationship_to_next is None
                            else ("forward" if s.forward else "backward")
                        ),
                        "evidence": (
                            s.relationship_to_next.evidence or None
                            if s.relationship_to_next
                            else None
                        ),
                    }
                    for s in found.steps
                ]
                if found.path_exists
                else None,
            }
            env = envelope(
                "find_entity_path",
                rid,
                result,
                elapsed_ms=(time.perf_counter() - start) * 1000,
                build_id=build,
            )
            account(env, compact=self.settings.enable_response_compression)
            return env

        return self.run("find_entity_path", api_key, handler)

    def get_entity_neighbors(
        self,
        api_key: str | None,
        *,
        vendor_name: str,
        entity: str,
        depth: int = 1,
        relationship_types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> Outcome:
        def handler(rid: str, start: float) -> _Answer:
            build = self.kg.build_id()
            keyed = self._neighbors_key(
                build, vendor_name, entity, depth, relationship_types, limit
            )
            return self._through_cache(keyed, build, rid, start, lambda: answer(rid, start, build))

        def answer(rid: str, start: float, build: int) -> dict[str, Any]:
            info = self.kg.vendor(vendor_name)
            hood = self.kg.neighbors(
                info,
                _entity_ref(entity),
                depth=depth,
                relationship_types=relationship_types,
                limit=limit,
            )
            neighbours = [
                {"entity_id": e.id, "name": e.name, "entity_type": e.type, "distance": d}
                for e, d in hood.entities
            ]
            rels = [
                {
                    "relationship_id": r.id,
                    "source_id": r.source_id,
                    "target_id": r.target_id,
                    "relationship_type": r.type,
                    "confidence": round(r.confidence, 3),
                }
                for r in hood.relationships
            ]

            def build_env(n: int) -> dict[str, Any]:
                return envelope(
                    "get_entity_neighbors",
                    rid,
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
                    elapsed_ms=(time.perf_counter() - start) * 1000,
                    build_id=build,
                )

            return self._fit(build_env, len(neighbours) + len(rels), "neighbours")[0]

        return self.run("get_entity_neighbors", api_key, handler)

    # -- get_server_metrics ---------------------------------------------------------

    def _replica_metrics(self) -> dict[str, Any]:
        """This replica's own figures: calls, errors and latency per tool, caches."""
        snap = self.metrics.snapshot()
        snap["caches"] = {
            name: {
                "entries": len(cache),
                "hit_rate": round(cache.stats.hit_rate, 4),
                "hits": cache.stats.hits,
                "misses": cache.stats.misses,
                "evictions": cache.stats.evictions,
                "ttl_s": cache.ttl,
            }
            for name, cache in (("search", self.search_cache), ("vendor", self.vendor_cache))
        }
        return snap

    def get_server_metrics(self, api_key: str | None) -> Outcome:
        """This replica's metrics (``replica`` names it) and, under ``replicas``,
        every live replica's own, read from the database (None while unreachable)."""

        def handler(rid: str, start: float) -> _Answer:
            snap = self._replica_metrics()
            snap["replica"] = self.replicas.name
            try:
                snap["graph_build_id"] = self.kg.build_id()
                snap["database"] = "ok"
                snap["replicas"] = self.replicas.live()
            except Exception as exc:
                snap["graph_build_id"] = None
                snap["database"] = f"unavailable: {failure_from(exc) or type(exc).__name__}"
                snap["replicas"] = None
            env = envelope(
                "get_server_metrics", rid, snap, elapsed_ms=(time.perf_counter() - start) * 1000
            )
            account(env, compact=self.settings.enable_response_compression)
            return _Answer(env)

        # the metrics answer even while the database is down
        return self.run("get_server_metrics", api_key, handler, snapshot=False)


def _vendor_key_name(name: str) -> str:
    """A vendor name as cache keys hold it (resolution ignores case and edge spaces)."""
    return name.strip().casefold()


def _vendors_bound(page_size: int) -> str:
    """What list_vendors cursors and cache entries are bound to."""
    return digest({"op": "list_vendors", "size": page_size})


def _entity_ref(text: str) -> int | str:
    stripped = text.strip()
    # ASCII digits only: str.isdigit() also admits '²' and '①', which int() refuses
    decimal = stripped.isascii() and stripped.isdigit()
    return int(stripped) if decimal and len(stripped) < 19 else text
