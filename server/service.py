"""The per-call frame every tool call goes through, and the state it runs on.

A call is admitted (API key and rate limits, :mod:`server.auth`), answered by
its tool (:mod:`server.tools`) inside one read snapshot of the knowledge base
and through the answer caches, and recorded in the metrics. An expected failure
becomes the error envelope with the contract's code; a bug becomes
SEARCH_FAILED with the request id (its traceback goes to the server log, never
to the client). Every entry point takes the caller's API key and returns
``(envelope, is_error)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from kg.settings import GraphSettings
from kg.store import KnowledgeGraph
from search.hybrid import search_pool
from search.settings import SearchSettings
from server.auth import Gate, KeyStore
from server.builds import BuildWatcher
from server.cache import TTLCache
from server.cursor import CursorCodec
from server.envelope import Counting, error_envelope, request_id, reused
from server.errors import ErrorCode, ToolFailure, failure_from
from server.metrics import Metrics
from server.replicas import ReplicaBoard, replica_name
from server.settings import ServerSettings
from server.tools import TOOLS, VIEWS
from server.tools.arguments import ToolArguments
from server.tools.base import Answer, Call, Keyed, Tool
from sql.database import Database

log = logging.getLogger("server")

Outcome = tuple[dict[str, Any], bool]
#: A call's arguments: checked already (a tool's ``Arguments``), or as given in code
Arguments = ToolArguments | Mapping[str, Any]


class Service:
    """The server's state (pool, models, caches, limiter, keys, metrics, tools) and
    the frame its tool calls run in."""

    def __init__(
        self,
        settings: ServerSettings,
        db: Database,
        *,
        embedder: Any,
        search_settings: SearchSettings | None = None,
        graph_settings: GraphSettings | None = None,
        pool_size: int = 4,
        port: int | None = None,
    ) -> None:
        self.settings = settings
        self.counting = Counting.of(settings)
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
            async_commit=settings.fast("async-commit"),
        )
        self.metrics = Metrics()
        # every replica's own metrics, shared through the database (server.replicas)
        self.replicas = ReplicaBoard(
            db, replica_name(settings.replica_name, port), self.replica_metrics, pool=self.pool
        )
        # the MCP tools, and the web explorer's views (answered alike, not published)
        self.tools: dict[str, Tool] = {tool.name: tool(self) for tool in (*TOOLS, *VIEWS)}
        # knows the newest graph build without a query, so cached answers need none
        # (speed layer build-watcher, server/builds.py)
        self.builds = BuildWatcher(db) if settings.fast("build-watcher") else None

    def close(self) -> None:
        self.replicas.close()
        if self.builds is not None:
            self.builds.close()
        self.search_pool.close()
        self.gate.close()
        self.pool.close()

    # -- entry points --------------------------------------------------------------------

    def call(
        self,
        operation: str,
        api_key: str | None,
        arguments: Arguments,
        *,
        cache_first: bool = True,
    ) -> Outcome:
        """``operation(**arguments)`` for ``api_key``.

        Speed layer ``cache-first`` (``KB_PLAIN_PATHS``): the cached answer (see
        :meth:`cached`) is looked up first, unless ``cache_first`` is False (the
        caller just did). A hit then needs no database connection, so under load
        it does not wait for the pool behind fresh calls: at 50 clients a cached
        find_vendor_info spent 0.1 ms inside the tool, against 208 ms without the
        layer. The plain path goes straight to the tool, which finds the same
        cache entry after opening the read snapshot and asking for the build.
        """
        first = cache_first and self.settings.fast("cache-first")
        hit = self.cached(operation, api_key, arguments) if first else None
        if hit is not None:
            return hit
        tool = self.tools[operation]
        return self._run(
            operation,
            api_key,
            lambda call: tool.answer(call, _arguments(tool, arguments)),
            snapshot=tool.snapshot,
        )

    def cached(self, operation: str, api_key: str | None, arguments: Arguments) -> Outcome | None:
        """The cached whole answer to ``operation(**arguments)`` for ``api_key``, or None.

        For the event loop: no I/O, microseconds. It looks up exactly the cache
        entry the full call would, for the newest build as the watcher knows it;
        None when that build is not known for sure (no watcher, database
        unreachable), nothing is cached, or the request is invalid (the full call
        then reports it). A hit is authenticated and rate-limited like any call.
        """
        tool = self.tools.get(operation)
        build = self.builds.current() if self.builds is not None else None
        if tool is None or build is None:
            return None
        try:
            keyed = tool.key(build, _arguments(tool, arguments))
        except (ToolFailure, ValidationError):
            return None
        if keyed is None:
            return None
        cache, key = keyed
        env = cache.get(key, build, count_miss=False)
        if env is None:
            return None
        return self._run(operation, api_key, lambda call: Answer(self.reuse(env, call), True))

    def refuse(self, operation: str, failure: ToolFailure) -> Outcome:
        """The error answer to a call refused before it ran (its arguments), counted
        in the metrics like any failed call."""
        env = error_envelope(
            operation,
            request_id(),
            failure,
            elapsed_ms=0.0,
            compact=self.settings.enable_response_compression,
            counter=self.counting.count,
        )
        self.metrics.record(operation, 0.0, cache_hit=False, error=failure.code.value)
        return env, True

    # -- the frame -----------------------------------------------------------------------

    def _run(
        self,
        operation: str,
        api_key: str | None,
        handler: Callable[[Call], Answer],
        *,
        snapshot: bool = False,
    ) -> Outcome:
        """Auth, rate limit, then ``handler``, inside one read snapshot of the
        knowledge base when ``snapshot``: the answer comes from exactly one graph
        build, the one its ``graph_build_id`` names, even while a rebuild commits."""
        call = Call(request_id(), time.perf_counter())
        cache_hit = False
        error: str | None = None
        try:
            self.gate.admit(api_key)
            if snapshot:
                with self.kg.snapshot():
                    answer = handler(call)
            else:
                answer = handler(call)
            cache_hit = answer.cache_hit
            return answer.env, False
        except Exception as exc:
            failure = failure_from(exc)
            if failure is None:
                log.exception("%s failed unexpectedly (request %s)", operation, call.rid)
                failure = ToolFailure(
                    ErrorCode.SEARCH_FAILED,
                    f"Unexpected server error ({type(exc).__name__}); the server log has "
                    f"request {call.rid}.",
                )
            error = failure.code.value
            env = error_envelope(
                operation,
                call.rid,
                failure,
                elapsed_ms=call.elapsed_ms(),
                compact=self.settings.enable_response_compression,
                counter=self.counting.count,
            )
            return env, True
        finally:
            self.metrics.record(operation, call.elapsed_ms(), cache_hit=cache_hit, error=error)

    def through_cache(
        self, keyed: Keyed, build: int, call: Call, compute: Callable[[], dict[str, Any]]
    ) -> Answer:
        """The answer cached under ``keyed`` for ``build``, or ``compute()``'s, kept."""
        cache, key = keyed
        hit = cache.get(key, build)
        if hit is not None:
            return Answer(self.reuse(hit, call), True)
        env = compute()
        cache.put(key, build, env)
        return Answer(env)

    def reuse(self, env: dict[str, Any], call: Call) -> dict[str, Any]:
        """A cached answer as ``call``'s envelope: its own id, time and token count."""
        return reused(
            env,
            call.rid,
            elapsed_ms=call.elapsed_ms(),
            compact=self.settings.enable_response_compression,
            counting=self.counting,
        )

    def newest_build(self) -> int:
        """The newest complete graph build: the watcher's, or the database's."""
        build = self.builds.current() if self.builds is not None else None
        return build if build is not None else self.kg.build_id()

    def replica_metrics(self) -> dict[str, Any]:
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


def _arguments(tool: Tool, arguments: Arguments) -> ToolArguments:
    """``arguments`` as the tool's ``Arguments`` (validated here when given as a mapping)."""
    if isinstance(arguments, ToolArguments):
        return arguments
    return tool.Arguments.model_validate(arguments)
