"""The graph-build watcher and the cache hits it allows without the database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mcp.client import Client

from server.builds import APPLICATION_NAME, BuildWatcher
from sql.database import Database
from tests.fixtures.kg import mark_build
from tests.fixtures.server import Harness


def _newest(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute(
        "SELECT coalesce(max(id), 0) FROM graph_builds WHERE status = 'complete'"
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_the_watcher_follows_committed_builds_only(graph_db: Database) -> None:
    watcher = BuildWatcher(graph_db)
    try:
        assert watcher.wait_for(timeout=10)
        with psycopg.connect(graph_db.conninfo) as conn:
            first = _newest(conn)
        assert watcher.current() == first > 0
        # a build that rolls back, and one still running, change nothing
        with psycopg.connect(graph_db.conninfo) as conn:
            mark_build(conn)
            conn.rollback()
            conn.execute(
                "INSERT INTO graph_builds (status, corpus_root) VALUES ('running', 'tests')"
            )
        time.sleep(0.3)
        assert watcher.current() == first
        with psycopg.connect(graph_db.conninfo) as conn:
            mark_build(conn)
            conn.commit()
            second = _newest(conn)
        assert second > first
        assert watcher.wait_for(second, timeout=10)
        assert watcher.current() == second
    finally:
        watcher.close()


def test_the_watcher_reconnects_and_misses_no_build(graph_db: Database) -> None:
    watcher = BuildWatcher(graph_db, max_backoff_s=0.2)
    try:
        assert watcher.wait_for(timeout=10)
        with psycopg.connect(graph_db.conninfo, autocommit=True) as conn:
            killed = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s AND datname = current_database()",
                (APPLICATION_NAME,),
            ).fetchall()
            assert killed == [(True,)]
            mark_build(conn)  # committed while the watcher has no connection
            newest = _newest(conn)
        # unknown while it reconnects (callers ask the database), then current again
        assert watcher.wait_for(newest, timeout=10)
        assert watcher.current() == newest
    finally:
        watcher.close()
    assert watcher.current() is None or watcher.current() == newest


@pytest.mark.parametrize(
    ("layers", "lookups", "from_memory"),
    [
        # a repeated call is looked up on the event loop, and needs no connection
        (frozenset(), "loop", True),
        # cache-on-loop off: looked up first in the worker thread, still no connection
        (frozenset({"cache-on-loop"}), "worker", True),
        # and cache-first off too: the tool's own path finds the entry after a query
        (frozenset({"cache-on-loop", "cache-first"}), "none", False),
        # no build watcher: the newest build is unknown without a query
        (frozenset({"build-watcher"}), "loop", False),
    ],
)
def test_cache_hits_need_no_database_connection(
    graph_db: Database,
    embedder: Any,
    tmp_path: Path,
    layers: frozenset[str],
    lookups: str,
    from_memory: bool,
) -> None:
    """Cached answers with the cache layers on (KB_PLAIN_PATHS empty) and with each
    switched back to its plain path: hits all the same, from memory or not."""
    import threading

    harness = Harness(graph_db, embedder, tmp_path, plain_paths=layers)
    calls = [
        ("find_vendor_info", {"vendor_name": "Acme Corp", "response_mode": "full"}),
        ("list_vendors", {"page_size": 2}),
        (
            "find_entity_path",
            {"vendor_name": "Acme Corp", "from_entity": "Wile E. Coyote", "to_entity": "Mesa"},
        ),
        ("get_entity_neighbors", {"vendor_name": "Acme Corp", "entity": "Roadrunner 3000"}),
    ]
    where: list[str] = []  # per cache lookup before the tool: on the loop or in a worker

    async def scenario(client: Client) -> Any:
        service = harness.service
        assert service is not None
        assert (service.builds is None) is ("build-watcher" in layers)
        if service.builds is not None:
            assert service.builds.wait_for(timeout=10)
        first = [await client.call_tool(t, a) for t, a in calls]
        looked_up = service.cached

        def spy(*args: Any) -> Any:
            on_loop = threading.current_thread() is threading.main_thread()
            where.append("loop" if on_loop else "worker")
            return looked_up(*args)

        service.cached = spy  # type: ignore[method-assign]
        before = service.pool.get_stats().get("requests_num", 0)
        again = [await client.call_tool(t, a) for t, a in calls]
        after = service.pool.get_stats().get("requests_num", 0)
        return first, again, after - before

    first, again, requests = harness.run(scenario)
    assert not any(r.is_error for r in first)
    assert [r.structured_content["execution_context"]["cache_hit"] for r in first] == [False] * len(
        calls
    )
    assert [r.structured_content["execution_context"]["cache_hit"] for r in again] == [True] * len(
        calls
    )
    assert where == ([] if lookups == "none" else [lookups] * len(calls))
    if from_memory:
        assert requests == 0, "a cache hit took a connection from the pool"
    else:
        assert requests >= len(calls)
    for a, b in zip(first, again, strict=True):
        assert a.structured_content["results"] == b.structured_content["results"]
        ctx = b.structured_content["execution_context"]
        assert ctx["request_id"] != a.structured_content["execution_context"]["request_id"]


def test_without_a_watcher_every_call_asks_the_database(
    graph_db: Database,
    embedder: Any,
    tmp_path: Path,
) -> None:
    from server.service import Service

    harness = Harness(graph_db, embedder, tmp_path, plain_paths={"build-watcher"})
    service = Service(harness.settings, graph_db, embedder=embedder)
    assert service.builds is None
    try:
        args = {"vendor_name": "Acme Corp"}
        assert service.cached("find_vendor_info", harness.key, args) is None
        _, is_error = service.call("find_vendor_info", harness.key, args)
        assert not is_error
        assert service.cached("find_vendor_info", harness.key, args) is None
        again, _ = service.call("find_vendor_info", harness.key, args)
        assert again["execution_context"]["cache_hit"] is True
    finally:
        service.close()


def test_under_concurrency_a_cached_answer_takes_its_turn_through_the_threads(
    graph_db: Database,
    embedder: Any,
    tmp_path: Path,
) -> None:
    """While another call runs in a worker thread, a repeated call is not served ahead
    of it on the event loop: it goes through the worker threads, like every call, and
    is a cache hit there, looked up before anything else, so it asks the pool for no
    connection (under load, cached answers had waited for one behind fresh calls)."""
    import threading

    import anyio

    harness = Harness(graph_db, embedder, tmp_path)
    vendor = ("find_vendor_info", {"vendor_name": "Acme Corp"})

    async def scenario(client: Client) -> Any:
        service = harness.service
        assert service is not None and service.builds is not None
        assert service.builds.wait_for(timeout=10)
        await client.call_tool(*vendor)  # cached from now on

        def requests() -> int:
            assert service is not None
            return int(service.pool.get_stats().get("requests_num", 0))

        before = requests()
        await client.call_tool("semantic_search", {"query": "rocket sled brakes"})
        search_alone = requests() - before
        idle = requests()
        alone = await client.call_tool(*vendor)
        idle_hit = requests() - idle

        results: dict[str, Any] = {}

        async def search() -> None:
            results["search"] = await client.call_tool(
                "semantic_search", {"query": "anvil delivery delays"}
            )

        lookups: list[bool] = []  # per cache lookup: made on the event loop's thread?
        looked_up = service.cached
        # the search stays in its worker thread until the vendor call has looked (a
        # search can end within the few milliseconds the test waits below)
        looked = threading.Event()

        def spy(*args: Any) -> Any:
            lookups.append(threading.current_thread() is threading.main_thread())
            if len(lookups) >= 2:
                looked.set()
            return looked_up(*args)

        answered = service.call

        def held(operation: str, *args: Any, **kwargs: Any) -> Any:
            if operation == "semantic_search":
                looked.wait(timeout=10)
            return answered(operation, *args, **kwargs)

        service.cached = spy  # type: ignore[method-assign]
        service.call = held  # type: ignore[method-assign]
        before = requests()
        async with anyio.create_task_group() as tg:
            tg.start_soon(search)
            await anyio.sleep(0.005)  # the search is in its worker thread (tens of ms)
            results["vendor"] = await client.call_tool(*vendor)
        together = requests() - before
        return alone, idle_hit, search_alone, results, together, lookups

    alone, idle_hit, search_alone, results, together, lookups = harness.run(scenario)
    assert alone.structured_content["execution_context"]["cache_hit"] is True
    assert idle_hit == 0  # alone: from memory on the event loop
    assert not results["search"].is_error
    assert results["vendor"].structured_content["execution_context"]["cache_hit"] is True
    # the search looked on the event loop (nothing else ran), the hit in a worker thread
    assert lookups == [True, False]
    assert together == search_alone  # the hit took its turn, and no connection


def test_a_search_belongs_to_the_build_it_read_even_when_the_watcher_lags(
    db: Database,
    embedder: Any,
    extractor: Any,
    tmp_path: Path,
) -> None:
    """A search reads its graph build in its own statement. When a rebuild lands
    between the server's idea of the newest build and the search, the answer, its
    cache entry and its cursor belong to the build the search read."""
    from extraction.rebuild.pipeline import Rebuilder
    from server.service import Service
    from tests.fixtures.search import write_notes

    Rebuilder(db, embedder=embedder, extractor=extractor).run(write_notes(tmp_path / "notes"))
    harness = Harness(db, embedder, tmp_path / "server", plain_paths={"build-watcher"})
    service = Service(harness.settings, db, embedder=embedder)

    def search(**arguments: Any) -> tuple[dict[str, Any], bool]:
        return service.call("semantic_search", harness.key, arguments)

    try:
        first, is_error = search(query="rocket sled", page_size=2)
        assert not is_error
        old = first["execution_context"]["graph_build_id"]
        with psycopg.connect(db.conninfo) as conn:
            mark_build(conn)
            conn.commit()
            new = _newest(conn)
        assert new > old
        # a server that has not heard of the new build yet (a lagging watcher)
        service.newest_build = lambda: old  # type: ignore[method-assign]
        lagging, is_error = search(query="plasma coils", page_size=2)
        assert not is_error and lagging["results"]
        assert lagging["execution_context"]["graph_build_id"] == new
        del service.newest_build  # the server now knows the new build
        following, is_error = search(
            query="plasma coils", page_size=2, cursor=lagging["pagination"]["cursor"]
        )
        assert not is_error and following["execution_context"]["graph_build_id"] == new
        assert {r["chunk_id"] for r in following["results"]}.isdisjoint(
            r["chunk_id"] for r in lagging["results"]
        )
        again, _ = search(query="plasma coils", page_size=2)
        assert again["execution_context"]["cache_hit"] is True  # kept under the new build
        stale, is_error = search(
            query="rocket sled", page_size=2, cursor=first["pagination"]["cursor"]
        )
        assert is_error and "stale" in stale["error"]["message"]
    finally:
        service.close()
