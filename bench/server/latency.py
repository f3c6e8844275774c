"""Part 2, latency per tool and mode: each server (stdio or streamable HTTP, cached or
uncached) measured through the SDK client and the lean one, the paired bare-call
overhead, and the bare library calls in this process."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench import REPO
from bench.load.server_process import ServerProcess
from bench.server import MODES, QUERIES
from bench.wire import HttpWire, StdioWire, WireClient
from kg.settings import GraphSettings
from kg.store import KnowledgeGraph
from search.embedder import Embedder
from search.hybrid import hybrid_search, search_pool
from search.metrics import percentile
from server.sdk import http_client
from sql.database import Database


def stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def _http_server(server_env: dict[str, str]) -> ServerProcess:
    """``python -m server`` over HTTP, without the client's key in its environment;
    its stderr in a file of its own."""
    log = Path(tempfile.mkdtemp(prefix="kb-bench-server-")) / "server.log"
    return ServerProcess({k: v for k, v in server_env.items() if k != "BMCIS_API_KEY"}, log)


# A tool call in a measured session: arguments in, "was it an error answer" out.
Call = Callable[[str, dict[str, Any]], Awaitable[bool]]
BARE = " (bare)"  # suffixes of a paired call's bare and served times
SERVED = " (served, paired)"
CLIENTS = ("sdk", "lean")
TRANSPORTS = ("stdio", "http")


def column(client: str, transport: str, cache_state: str) -> str:
    """``stdio cached`` for the SDK client, ``lean stdio cached`` for the lean one."""
    return f"{'lean ' if client == 'lean' else ''}{transport} {cache_state}"


COLUMNS = [column(c, t, s) for c in CLIENTS for t in TRANSPORTS for s in ("uncached", "cached")]


async def _measure_calls(
    call: Call, calls: list[tuple[str, str, dict[str, Any]]], repeats: int
) -> dict[str, list[float]]:
    """Round robin: each round calls every tool once, starting one further along
    the list each time, so no call is always first after a change of tool (the
    first of a row of identical calls measured up to 0.8 ms slower over HTTP)."""
    out: dict[str, list[float]] = {label: [] for label, _, _ in calls}
    for n in range(repeats):
        shift = n % len(calls)
        for label, tool, args in calls[shift:] + calls[:shift]:
            start = time.perf_counter()
            is_error = await call(tool, args)
            out[label].append((time.perf_counter() - start) * 1000)
            if is_error:
                raise SystemExit(f"{label}: the call failed")
    return out


def latency(
    env: dict[str, str],
    key: str,
    largest: str,
    vendors: list[str],
    repeats: int,
    extra: list[tuple[str, str, dict[str, Any]]],
    paired: Mapping[str, Callable[[dict[str, Any]], None]],
) -> dict[str, Any]:
    """p50 / p95 of every call in every column; under ``"paired"``, per uncached
    stdio column, the median of (served - bare) for the calls in ``paired``."""
    uncached_env = {
        **env,
        "SEARCH_CACHE_TTL": "0",
        "VENDOR_CACHE_TTL": "0",
        "KB_GRAPH_CACHE_VENDORS": "0",
    }
    calls: list[tuple[str, str, dict[str, Any]]] = [
        (f"semantic_search {mode}", "semantic_search", {"query": QUERIES[n], "response_mode": mode})
        for n, mode in enumerate(MODES)
    ]
    calls += [
        (
            f"find_vendor_info {mode}",
            "find_vendor_info",
            {"vendor_name": largest, "response_mode": mode},
        )
        for mode in MODES
    ]
    calls += extra
    # the floor of any call: one tiny query, a tiny answer
    calls.append(("floor: list_vendors page_size=1", "list_vendors", {"page_size": 1}))
    results: dict[str, Any] = {}
    for client in CLIENTS:
        for transport in TRANSPORTS:
            for cache_state, server_env in (("uncached", uncached_env), ("cached", env)):
                pairs = paired if cache_state == "uncached" and transport == "stdio" else {}
                times = _one_server(
                    client, transport, cache_state, server_env, key, vendors, repeats, calls, pairs
                )
                for label in pairs:
                    bare, served = times.pop(label + BARE), times.pop(label + SERVED)
                    diffs = [a - b for a, b in zip(served, bare, strict=True)]
                    results.setdefault("paired", {}).setdefault(label, {})[client] = {
                        "overhead": stats(diffs),
                        "bare": stats(bare),
                        "served": stats(served),
                    }
                for label, values in times.items():
                    results.setdefault(label, {})[column(client, transport, cache_state)] = stats(
                        values
                    )
    return results


async def _scenario(
    call: Call,
    cache_state: str,
    vendors: list[str],
    repeats: int,
    calls: list[tuple[str, str, dict[str, Any]]],
    paired: Mapping[str, Callable[[dict[str, Any]], None]],
) -> dict[str, list[float]]:
    """Each call ``repeats`` times. A call named in ``paired`` (uncached only) then
    runs ``repeats`` more times, each followed or preceded, in turn, by its bare
    library call in this process with the same arguments (times under the label
    plus ``SERVED`` and ``BARE``): each pair sees the same moment of a noisy machine."""
    # warm-up: model load, first connections
    await call("semantic_search", {"query": "warm up"})
    await call("find_vendor_info", {"vendor_name": vendors[-1]})
    if cache_state == "cached":
        for _, tool, args in calls:
            await call(tool, args)  # fill the caches
        return await _measure_calls(call, calls, repeats)
    out: dict[str, list[float]] = {}
    for label, tool, args in calls:
        times = []
        for i in range(repeats):
            call_args = _fresh(tool, args, i, "")
            start = time.perf_counter()
            is_error = await call(tool, call_args)
            times.append((time.perf_counter() - start) * 1000)
            if is_error:
                raise SystemExit(f"{label}: the call failed")
        out[label] = times
        bare = paired.get(label)
        if bare is None:
            continue
        # a second pass, in pairs (the table's own times above are undisturbed)
        for i in range(repeats):
            call_args = _fresh(tool, args, i, "paired ")
            if i % 2:
                out.setdefault(label + BARE, []).append(_timed(bare, call_args))
            start = time.perf_counter()
            is_error = await call(tool, call_args)
            out.setdefault(label + SERVED, []).append((time.perf_counter() - start) * 1000)
            if is_error:
                raise SystemExit(f"{label}: the call failed")
            if not i % 2:
                out.setdefault(label + BARE, []).append(_timed(bare, call_args))
    return out


def _fresh(tool: str, args: dict[str, Any], i: int, tag: str) -> dict[str, Any]:
    """The call's arguments, with a new query each time: nothing to reuse anywhere."""
    if tool != "semantic_search":
        return args
    return {**args, "query": f"{QUERIES[i % len(QUERIES)]} {tag}{i}"}


def _timed(fn: Callable[[dict[str, Any]], None], args: dict[str, Any]) -> float:
    start = time.perf_counter()
    fn(args)
    return (time.perf_counter() - start) * 1000


def _one_server(
    client: str,
    transport: str,
    cache_state: str,
    server_env: dict[str, str],
    key: str,
    vendors: list[str],
    repeats: int,
    calls: list[tuple[str, str, dict[str, Any]]],
    paired: Mapping[str, Callable[[dict[str, Any]], None]],
) -> dict[str, list[float]]:
    """One server process, one session, every call of the list ``repeats`` times."""
    if client == "lean":
        wire: WireClient
        server = None
        if transport == "stdio":
            wire = StdioWire(server_env, REPO)
        else:
            server = _http_server(server_env)
            wire = HttpWire("127.0.0.1", server.port, "/mcp", key)

        async def lean_call(tool: str, args: dict[str, Any]) -> bool:
            return bool(wire.call_tool(tool, args).get("isError"))

        try:
            return anyio.run(_scenario, lean_call, cache_state, vendors, repeats, calls, paired)
        finally:
            wire.close()
            if server is not None:
                server.stop()

    async def run_with(session: Client) -> dict[str, list[float]]:
        async def sdk_call(tool: str, args: dict[str, Any]) -> bool:
            return bool((await session.call_tool(tool, args)).is_error)

        return await _scenario(sdk_call, cache_state, vendors, repeats, calls, paired)

    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "server"], env=server_env, cwd=str(REPO)
        )

        async def stdio_main() -> dict[str, list[float]]:
            async with Client(params) as session:
                return await run_with(session)

        return anyio.run(stdio_main)
    http_server = _http_server(server_env)
    try:

        async def http_main() -> dict[str, list[float]]:
            async with (
                http_client({"X-API-Key": key}) as http,
                Client(streamable_http_client(http_server.url, http_client=http)) as session,
            ):
                return await run_with(session)

        return anyio.run(http_main)
    finally:
        http_server.stop()


def bare_calls(db: Database, embedder: Embedder, largest: str, repeats: int) -> dict[str, Any]:
    pool = db.pool(min_size=1, max_size=2)
    searches = search_pool(db, max_size=2)  # as a library user who searches repeatedly
    try:
        hybrid_search("warm up", db=searches, embedder=embedder)
        search = []
        for i in range(repeats):
            start = time.perf_counter()
            query = f"{QUERIES[i % len(QUERIES)]} {i}"
            hybrid_search(query, db=searches, embedder=embedder, top_k=10)
            search.append((time.perf_counter() - start) * 1000)
        stats_cold, capped_cold = [], []
        kg = cold_graph(pool)
        for _ in range(repeats):
            start = time.perf_counter()
            kg.statistics(largest)
            stats_cold.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            vendor_graph(kg, largest)
            capped_cold.append((time.perf_counter() - start) * 1000)
    finally:
        searches.close()
        pool.close()
    return {
        "hybrid_search top_k=10": stats(search),
        "kg statistics (cold)": stats(stats_cold),
        "kg statistics + capped (cold, one snapshot)": stats(capped_cold),
    }


def cold_graph(pool: Any) -> KnowledgeGraph:
    """A graph that keeps no vendor graph between calls, as the uncached server's."""
    return KnowledgeGraph(pool, settings=GraphSettings(cache_vendors=0))


def vendor_graph(kg: KnowledgeGraph, vendor: str) -> None:
    """What find_vendor_info full reads, as a library user gets it at least cost: the
    statistics and the capped graph in one snapshot, so the vendor is loaded once
    (each call on its own would load it again)."""
    with kg.snapshot():
        kg.statistics(vendor)
        kg.capped(vendor)
