"""MCP server under load: ``python -m bench.load [--quick]`` (``make bench-load``).

A bounded load generator on loopback. It builds (or brings up to date, with the real
incremental rebuild) a knowledge base of its own, ``kb_bench_load``, from the bundled
sample corpus ``samples/vendor_notes`` on the configured PostgreSQL (``DATABASE_URL``,
else the embedded default server); the user's knowledge base is never touched. It starts a
real ``python -m server --transport streamable-http`` subprocess on 127.0.0.1 with a keys
file of its own and one API key per simulated client, and drives it with real MCP client
sessions (the SDK's ``Client`` over streamable HTTP) spread over worker processes.

Every client runs a closed loop (its next call when the previous one returns) over a mix
of all seven tools and every mode: semantic_search in the four response modes (some with
``fields``, some following the cursor to page 2), find_vendor_info in the four modes with
and without relationships, get_chunk on chunk ids its searches returned, list_vendors
with paging, find_entity_path and get_entity_neighbors on vendor / entity pairs read from
the database at start-up, get_server_metrics. Most searches repeat popular queries (cache
hits), the rest are fresh variations (cache misses); the observed share of
``execution_context.cache_hit`` is reported. Every call has a hard timeout (counted as a
TIMEOUT error) and every phase a hard deadline.

Measured per call: tool, mode, start, end, latency, the outcome (``ok``, the envelope's
``error.code``, or the exception type of a transport failure or TIMEOUT), the cache hit
and the time inside the server's tool code (``execution_context.execution_time_ms``).
Reported per phase and tool (and tool and mode): calls, p50 / p95 / p99 latency, p99/p50,
errors by code, cache-hit share; per phase: throughput (calls/s) and the CPU of the server
process, of PostgreSQL's backends for this database, of the client processes and of the
machine (psutil).

Phases of one run: (1) a single-client baseline (15 s); (2) the target run, 50 clients for
60 s; (3) escalation, 100, 200, 400, 800 clients for 20 s each, until something gives:
a call timed out, unintended errors above 1 % of calls, a tool's p99 above 5 x its p50,
throughput below 3/4 of the best phase so far, or the server process died. The first
level where throughput rose by less than 5 % over the previous one is named as the
saturation point (the escalation goes on). For the level that gave, the report names the
tools and codes, the latency growth, and where the CPU went.

Rate limits (BMCIS_RATE_LIMIT_MINUTE/_HOUR/_DAY) are set to ``--key-limit`` calls, more
than any normal key makes in the run, so the normal mix is never limited. One extra client
(4 calls/s) uses a key whose budget was spent before the measured phases (the spending,
on the normal mix from 8 sessions, is the unmeasured warm-up), so its RATE_LIMIT answers
are intended, counted apart, and show that one key's limit does not touch the others.

Targets (the target run): zero errors other than those intended rate limits; p99 <= 5 x
p50 for every tool; throughput reported against the single-client baseline of the same
run. Results: ``bench/results/load.json`` (everything, with machine and settings) and
``load.md``. Tracebacks in the server's stderr (kept in a file, copied next to the results
when there are any) are failures: exit status 1, as for missed targets with ``--strict``.

The client side is reusable: :func:`run_clients` runs N sessions for a while and returns
one :class:`CallRecord` per call, :func:`summarize` turns records into the statistics.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import multiprocessing
import os
import platform
import random
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import asdict, astuple, dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from bench import bench_queries
from search.metrics import percentile
from server.sdk import http_timeouts, share_output_schema_validator

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "vendor_notes"
DATABASE = "kb_bench_load"

TOOLS = (
    "semantic_search",
    "find_vendor_info",
    "get_chunk",
    "list_vendors",
    "find_entity_path",
    "get_entity_neighbors",
    "get_server_metrics",
)
MODES = ("ids_only", "metadata", "preview", "full")
OK = "ok"
INTENDED = "RATE_LIMIT"  # the only error code that may be intended, and only on the over-limit key
TIMEOUT = "TIMEOUT"
CANCELLED = "CANCELLED"
SESSION = "session"  # the pseudo-tool of a session that could not be opened or broke

P99_P50_LIMIT = 5.0
ERROR_RATE_LIMIT = 0.01
RISING = 1.05  # throughput must grow by 5 % per escalation step to count as rising
COLLAPSE = 0.75  # below this share of the best throughput so far the server gave

# Popular questions: repeated, so most of them are answered from the caches.
QUERIES = [
    "end of support for iOS 17",
    "Windows 10 extended security updates",
    "Python release schedule",
    "Terraform licence change",
    "Jira Data Center long term support",
    "Firefox extended support release",
    "Claude model family",
    "Kotlin multiplatform",
    "Linux kernel long term support",
    "TypeScript compiler",
    "Visual Studio Code extensions",
    "macOS security updates",
    "HashiCorp Vault end of life",
    "IntelliJ IDEA editions",
    "Swift concurrency",
    "Kubernetes patch releases",
    "PowerShell 7 support lifecycle",
    ".NET long term support",
    "Model Context Protocol servers",
    "who founded the company",
]
# Fresh variations: a popular question, a qualifier and a number no one asked before.
QUALIFIERS = [
    "release date",
    "end of life",
    "latest version",
    "support policy",
    "security patches",
    "history",
    "pricing",
    "roadmap",
    "migration",
    "alternatives",
]
FIELD_SETS: dict[str, list[list[str]]] = {
    "ids_only": [["chunk_id", "hybrid_score"], ["chunk_id", "rank"]],
    "metadata": [
        ["chunk_id", "source_file", "hybrid_score"],
        ["chunk_id", "vendor", "chunk_index", "total_chunks"],
    ],
    "preview": [["chunk_id", "chunk_snippet"], ["chunk_id", "context_header", "chunk_snippet"]],
    "full": [["chunk_id", "chunk_text"], ["chunk_id", "chunk_text", "bm25_score"]],
}
SEARCH_MODES = {"ids_only": 0.25, "metadata": 0.35, "preview": 0.25, "full": 0.15}
DEFAULT_WEIGHTS = {
    "semantic_search": 0.40,
    "find_vendor_info": 0.20,
    "get_chunk": 0.12,
    "list_vendors": 0.06,
    "find_entity_path": 0.08,
    "get_entity_neighbors": 0.10,
    "get_server_metrics": 0.04,
}


# -- what one call was ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call as a client saw it. ``start`` and ``end`` are wall-clock seconds (epoch,
    comparable across processes), ``latency_ms`` from a monotonic clock. ``outcome`` is
    ``ok``, the envelope's ``error.code``, ``TIMEOUT``, ``CANCELLED`` or the exception type
    of a transport failure. ``over_limit``: made with the deliberately exhausted key."""

    client: int
    tool: str
    mode: str
    variant: str
    start: float
    end: float
    latency_ms: float
    outcome: str
    cache_hit: bool | None = None
    over_limit: bool = False
    server_ms: float | None = None
    """``execution_context.execution_time_ms``: the time inside the server's tool code"""

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    @property
    def intended(self) -> bool:
        """An error the benchmark asked for: RATE_LIMIT on the exhausted key."""
        return self.over_limit and self.outcome == INTENDED


# -- the workload ------------------------------------------------------------------------------


@dataclass
class Mix:
    """What the clients ask about (read from the knowledge base) and how often.

    ``vendors``: per vendor, the names a person may type for it (name, aliases, casing);
    ``paths``: (vendor, from entity, to entity); ``neighbors``: (vendor, entity);
    ``chunk_ids``: chunks to fetch before a client's own searches returned any."""

    vendors: list[list[str]]
    paths: list[tuple[str, str, str]]
    neighbors: list[tuple[str, str]]
    chunk_ids: list[int]
    queries: list[str] = field(default_factory=lambda: list(QUERIES))
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    repeat_share: float = 0.7
    """share of searches that repeat a popular query (the rest are fresh variations)"""
    follow_cursor_share: float = 0.3
    """share of paged answers whose next page the client asks for"""
    fields_share: float = 0.3
    """share of searches that name ``fields``"""
    cover_first: bool = False
    """every client calls each tool once, in a random order, before the weighted draw
    (short runs and tests see every tool)"""

    def describe(self) -> dict[str, Any]:
        return {
            "vendors": len(self.vendors),
            "vendor_names": sum(len(v) for v in self.vendors),
            "paths": len(self.paths),
            "neighbors": len(self.neighbors),
            "chunk_ids": len(self.chunk_ids),
            "popular_queries": len(self.queries),
            "weights": self.weights,
            "search_modes": SEARCH_MODES,
            "repeat_share": self.repeat_share,
            "follow_cursor_share": self.follow_cursor_share,
            "fields_share": self.fields_share,
            "cover_first": self.cover_first,
        }


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    mode: str
    variant: str
    args: dict[str, Any]


class Planner:
    """One client's next call: a weighted draw over the tools (with ``cover_first``, every
    tool once first), with follow-ups (the next page of an answer) and chunk ids taken
    from the client's own search results."""

    def __init__(self, mix: Mix, rng: random.Random) -> None:
        self.mix = mix
        self.rng = rng
        self.pending: deque[Call] = deque()
        self.chunks: deque[int] = deque(maxlen=64)
        self.first_round = [t for t in TOOLS if mix.cover_first and mix.weights.get(t, 0) > 0]
        rng.shuffle(self.first_round)
        self._tools = [t for t in TOOLS if mix.weights.get(t, 0) > 0]
        self._cumulative: list[float] = []
        total = 0.0
        for t in self._tools:
            total += mix.weights[t]
            self._cumulative.append(total)
        query_weights = [1.0 / (i + 1) for i in range(len(mix.queries))]  # Zipf-like
        self._query_cumulative = [sum(query_weights[: i + 1]) for i in range(len(query_weights))]

    def next(self) -> Call:
        if self.pending:
            return self.pending.popleft()
        if self.first_round:
            tool = self.first_round.pop()
        else:
            pick = self.rng.random() * self._cumulative[-1]
            tool = self._tools[min(bisect.bisect(self._cumulative, pick), len(self._tools) - 1)]
        make: Callable[[], Call] = getattr(self, f"_{tool}")
        return make()

    def observe(self, call: Call, envelope: dict[str, Any] | None) -> None:
        """Learn chunk ids and cursors from a successful answer."""
        if envelope is None:
            return
        results = envelope.get("results")
        if isinstance(results, list):
            for item in results:
                if isinstance(item, dict) and isinstance(item.get("chunk_id"), int):
                    self.chunks.append(item["chunk_id"])
        pagination = envelope.get("pagination") or {}
        cursor = pagination.get("cursor") if isinstance(pagination, dict) else None
        if (
            cursor
            and call.tool in ("semantic_search", "list_vendors")
            and "cursor" not in call.args
            and self.rng.random() < self.mix.follow_cursor_share
        ):
            variant = f"{call.variant}, page 2" if call.variant else "page 2"
            self.pending.append(
                replace(call, variant=variant, args={**call.args, "cursor": cursor})
            )

    def _query(self) -> tuple[str, str]:
        if self.rng.random() < self.mix.repeat_share:
            pick = self.rng.random() * self._query_cumulative[-1]
            i = min(bisect.bisect(self._query_cumulative, pick), len(self.mix.queries) - 1)
            return self.mix.queries[i], "popular"
        base = self.rng.choice(self.mix.queries)
        fresh = f"{base} {self.rng.choice(QUALIFIERS)} {self.rng.randrange(10_000, 99_999)}"
        return fresh, "fresh"

    def _semantic_search(self) -> Call:
        mode = self.rng.choices(list(SEARCH_MODES), weights=list(SEARCH_MODES.values()))[0]
        query, kind = self._query()
        args: dict[str, Any] = {"query": query, "response_mode": mode}
        variant = [kind]
        if self.rng.random() < self.mix.fields_share:
            args["fields"] = self.rng.choice(FIELD_SETS[mode])
            variant.append("fields")
        if self.rng.random() < 0.5:
            args["page_size"] = self.rng.choice((5, 10))
        else:
            args["top_k"] = self.rng.choice((5, 10, 20))
        return Call("semantic_search", mode, ", ".join(variant), args)

    def _find_vendor_info(self) -> Call:
        names = self.rng.choice(self.mix.vendors)
        mode = self.rng.choice(MODES)
        relationships = self.rng.random() < 0.7
        args: dict[str, Any] = {"vendor_name": self.rng.choice(names), "response_mode": mode}
        if not relationships:
            args["include_relationships"] = False
        return Call("find_vendor_info", mode, "" if relationships else "no relationships", args)

    def _get_chunk(self) -> Call:
        own = bool(self.chunks) and self.rng.random() < 0.8
        chunk_id = self.rng.choice(self.chunks) if own else self.rng.choice(self.mix.chunk_ids)
        mode = "full" if self.rng.random() < 0.5 else self.rng.choice(MODES[:3])
        return Call(
            "get_chunk",
            mode,
            "from a search" if own else "",
            {"chunk_id": chunk_id, "response_mode": mode},
        )

    def _list_vendors(self) -> Call:
        return Call("list_vendors", "-", "", {"page_size": self.rng.choice((2, 5, 10))})

    def _find_entity_path(self) -> Call:
        vendor, a, b = self.rng.choice(self.mix.paths)
        args: dict[str, Any] = {"vendor_name": vendor, "from_entity": a, "to_entity": b}
        if self.rng.random() < 0.3:
            args["max_hops"] = 3
        return Call("find_entity_path", "-", "", args)

    def _get_entity_neighbors(self) -> Call:
        vendor, entity = self.rng.choice(self.mix.neighbors)
        depth = 2 if self.rng.random() < 0.4 else 1
        return Call(
            "get_entity_neighbors",
            "-",
            f"depth {depth}",
            {
                "vendor_name": vendor,
                "entity": entity,
                "depth": depth,
                "limit": self.rng.choice((20, 50)),
            },
        )

    def _get_server_metrics(self) -> Call:
        return Call("get_server_metrics", "-", "", {})


@dataclass(frozen=True, slots=True)
class Answer:
    """What a call's result says: ``ok`` or the envelope's error code, the cache hit and
    server time of its ``execution_context``, and the envelope of a success."""

    outcome: str
    cache_hit: bool | None = None
    server_ms: float | None = None
    envelope: dict[str, Any] | None = None


def classify(result: CallToolResult) -> Answer:
    """The :class:`Answer` of a tool result."""
    env = result.structured_content
    if not isinstance(env, dict):
        return Answer("TOOL_ERROR" if result.is_error else "NO_STRUCTURED_CONTENT")
    context = env.get("execution_context")
    context = context if isinstance(context, dict) else {}
    ms = context.get("execution_time_ms")
    server_ms = float(ms) if isinstance(ms, int | float) else None
    error = env.get("error")
    if result.is_error or error:
        code = error.get("code") if isinstance(error, dict) else None
        return Answer(str(code) if code else "TOOL_ERROR", None, server_ms)
    hit = context.get("cache_hit")
    return Answer(OK, hit if isinstance(hit, bool) else None, server_ms, env)


def _exception_name(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return type(exc).__name__


# -- clients -----------------------------------------------------------------------------------


_ssl_context: ssl.SSLContext | None = None


def _shared_ssl_context() -> ssl.SSLContext:
    """One TLS context per process: httpx builds one per client otherwise (~20 ms of CPU
    loading the CA bundle, per session, for a loopback http:// URL that never uses it)."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = ssl.create_default_context()
    return _ssl_context


@asynccontextmanager
async def open_session(url: str, key: str, *, timeout_s: float = 30.0) -> AsyncIterator[Client]:
    """An MCP client session over streamable HTTP with ``key`` in ``X-API-Key``: the SDK's
    ``Client`` on an HTTP client with the SDK transports' default timeouts
    (:func:`server.sdk.http_timeouts`), sharing this process's TLS context and compiled
    output validators (:func:`server.sdk.share_output_schema_validator`)."""
    with share_output_schema_validator():
        async with (
            httpx2.AsyncClient(
                headers={"X-API-Key": key}, timeout=http_timeouts(), verify=_shared_ssl_context()
            ) as http,
            Client(
                streamable_http_client(url, http_client=http), read_timeout_seconds=timeout_s
            ) as client,
        ):
            yield client


@dataclass(frozen=True, slots=True)
class _ClientSpec:
    client: int
    key: str
    seed: int
    pace_s: float = 0.0  # > 0: one call per pace_s at most (the over-limit client)
    over_limit: bool = False
    url: str | None = None  # this client's server, when not the run's one URL


class _Gate:
    """Clients connect, then wait for the common start; they stop issuing at ``stop_at``."""

    def __init__(self, n: int, duration_s: float) -> None:
        self.n = n
        self.arrived = 0
        self.all_arrived = anyio.Event()
        self.opened = anyio.Event()
        self.duration_s = duration_s
        self.start_at = math.inf
        self.stop_at = math.inf

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.n:
            self.all_arrived.set()

    def open(self, start_at: float) -> None:
        self.start_at = start_at
        self.stop_at = start_at + self.duration_s
        self.opened.set()

    async def wait(self) -> None:
        await self.opened.wait()
        await anyio.sleep(max(0.0, self.start_at - time.time()))


async def _client(
    spec: _ClientSpec,
    url: str,
    mix: Mix,
    gate: _Gate,
    timeout_s: float,
    out: list[CallRecord],
) -> None:
    planner = Planner(mix, random.Random(spec.seed))
    arrived = False
    backoff = 0.2
    while time.time() < gate.stop_at:
        begun = time.time()
        t0 = time.perf_counter()
        try:
            async with open_session(url, spec.key, timeout_s=timeout_s) as client:
                # what a client does once connected; it also caches the output schemas
                # the SDK validates every answer against, before the measured calls
                await client.list_tools()
                if not arrived:
                    arrived = True
                    gate.arrive()
                    await gate.wait()
                backoff = 0.2
                next_slot = time.time()
                while time.time() < gate.stop_at:
                    if spec.pace_s:
                        await anyio.sleep(max(0.0, next_slot - time.time()))
                        next_slot = max(next_slot + spec.pace_s, time.time())
                    call = planner.next()
                    envelope, broken = await _call(client, call, spec, timeout_s, out)
                    planner.observe(call, envelope)
                    if broken:
                        break
        except Exception as exc:  # the session could not be opened, or broke under us
            now = time.time()
            if now >= gate.start_at:  # before the start it is part of the setup
                out.append(
                    CallRecord(
                        spec.client,
                        SESSION,
                        "-",
                        "",
                        begun,
                        now,
                        (time.perf_counter() - t0) * 1000,
                        _exception_name(exc),
                        None,
                        spec.over_limit,
                    )
                )
            if not arrived:
                arrived = True
                gate.arrive()
                await gate.wait()
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)


async def _call(
    client: Client, call: Call, spec: _ClientSpec, timeout_s: float, out: list[CallRecord]
) -> tuple[dict[str, Any] | None, bool]:
    """One timed call, its record appended to ``out``: the envelope when it succeeded, and
    whether the session should be replaced (after a transport failure)."""
    begun = time.time()
    t0 = time.perf_counter()
    answer = Answer(CANCELLED)
    broken = False

    def record() -> None:
        out.append(
            CallRecord(
                spec.client,
                call.tool,
                call.mode,
                call.variant,
                begun,
                time.time(),
                (time.perf_counter() - t0) * 1000,
                answer.outcome,
                answer.cache_hit,
                spec.over_limit,
                answer.server_ms,
            )
        )

    try:
        with anyio.fail_after(timeout_s):
            result = await client.call_tool(call.tool, call.args)
        answer = classify(result)
    except TimeoutError:
        answer = Answer(TIMEOUT)
    except Exception as exc:
        answer = Answer(_exception_name(exc))
        broken = True
    except BaseException:  # cancelled: the session died under us, or the phase's deadline
        record()
        raise
    record()
    return answer.envelope, broken


async def _run_specs(
    url: str,
    specs: Sequence[_ClientSpec],
    mix: Mix,
    duration_s: float,
    timeout_s: float,
    start: Callable[[], Awaitable[float]],
) -> list[CallRecord]:
    """Run the clients of one process: connect all, take the common start from ``start``,
    run for ``duration_s``; every call bounded by ``timeout_s``, the whole by a deadline."""
    gate = _Gate(len(specs), duration_s)
    out: list[CallRecord] = []
    connect_budget = 30.0 + 0.2 * len(specs)
    with anyio.move_on_after(connect_budget + duration_s + timeout_s + 30.0):
        async with anyio.create_task_group() as tg:
            for spec in specs:
                tg.start_soon(_client, spec, spec.url or url, mix, gate, timeout_s, out)
            with anyio.move_on_after(connect_budget):
                await gate.all_arrived.wait()
            gate.open(await start())
    return out


def _worker_process(
    conn: Connection,
    url: str,
    specs: list[_ClientSpec],
    mix: Mix,
    duration_s: float,
    timeout_s: float,
) -> None:
    """A worker process: runs its share of the clients and sends back their records."""

    async def start() -> float:
        conn.send("ready")
        got = await anyio.to_thread.run_sync(conn.recv)
        return float(got)

    try:
        records = anyio.run(_run_specs, url, specs, mix, duration_s, timeout_s, start)
        conn.send([astuple(r) for r in records])
    except BaseException as exc:
        conn.send(f"error: {type(exc).__name__}: {exc}")
        raise
    finally:
        conn.close()


def _receive(conn: Connection, timeout_s: float, what: str) -> Any:
    if not conn.poll(max(0.0, timeout_s)):
        raise TimeoutError(f"a worker process did not send {what} within {timeout_s:.0f} s")
    try:
        message = conn.recv()
    except EOFError:
        raise RuntimeError(f"a worker process exited before sending {what}") from None
    if isinstance(message, str) and message.startswith("error:"):
        raise RuntimeError(f"a worker process failed: {message[7:]}")
    return message


async def run_clients(
    url: str,
    keys: Sequence[str],
    n_clients: int,
    duration_s: float,
    mix: Mix,
    *,
    workers: int = 1,
    timeout_s: float = 10.0,
    over_limit_key: str | None = None,
    over_limit_rate: float = 4.0,
    seed: int = 0,
    urls: Sequence[str] = (),
) -> list[CallRecord]:
    """Run ``n_clients`` closed-loop MCP sessions against ``url`` for ``duration_s``
    seconds (client ``i`` uses ``keys[i % len(keys)]``) and return every call's record.

    With ``workers`` > 1 the sessions are spread over that many processes (one Python
    process of clients saturates its GIL long before the server does). With
    ``over_limit_key`` one more client makes ``over_limit_rate`` calls per second with
    that key; its records have ``over_limit`` set. With ``urls`` client ``i`` talks to
    ``urls[i % len(urls)]`` (replicas of one server). Calls still running at the end finish
    (each within ``timeout_s``) and are part of the records; sessions that cannot be
    opened or break are records of the pseudo-tool ``session``."""
    if not keys:
        raise ValueError("run_clients needs at least one key")
    specs = [
        _ClientSpec(
            i, keys[i % len(keys)], seed * 1_000_003 + i, url=urls[i % len(urls)] if urls else None
        )
        for i in range(n_clients)
    ]
    if over_limit_key is not None and over_limit_rate > 0:
        specs.append(
            _ClientSpec(
                n_clients, over_limit_key, seed * 1_000_003 + n_clients, 1 / over_limit_rate, True
            )
        )
    workers = max(1, min(workers, len(specs)))
    if workers == 1:

        async def start() -> float:
            return time.time() + 0.1

        return await _run_specs(url, specs, mix, duration_s, timeout_s, start)

    ctx = multiprocessing.get_context("spawn")
    procs: list[Any] = []
    conns: list[Connection] = []
    try:
        for i in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(
                target=_worker_process,
                args=(child, url, specs[i::workers], mix, duration_s, timeout_s),
                daemon=True,
                name=f"bench-load-worker-{i}",
            )
            proc.start()
            child.close()
            procs.append(proc)
            conns.append(parent)
        ready_by = time.time() + 60.0 + 0.2 * len(specs)
        for conn in conns:
            await anyio.to_thread.run_sync(_receive, conn, ready_by - time.time(), "ready")
        start_at = time.time() + 0.25
        for conn in conns:
            conn.send(start_at)
        done_by = start_at + duration_s + timeout_s + 60.0
        records: list[CallRecord] = []
        for conn in conns:
            rows = await anyio.to_thread.run_sync(
                _receive, conn, done_by - time.time(), "its records"
            )
            records.extend(CallRecord(*row) for row in rows)
        return records
    finally:
        for conn in conns:
            conn.close()
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=10)


async def exhaust_key(
    url: str, key: str, *, limit: int, mix: Mix | None = None, concurrency: int = 4, seed: int = 0
) -> int:
    """Spend the whole budget of ``key`` from ``concurrency`` sessions until the server
    answers RATE_LIMIT; the calls made. With ``mix`` the calls are the normal mix (so the
    spending warms the server's caches), else cheap get_server_metrics calls."""
    made = 0
    limited = anyio.Event()

    async def spend(i: int) -> None:
        nonlocal made
        planner = Planner(mix, random.Random(seed * 1_000_003 + i)) if mix else None
        async with open_session(url, key) as client:
            while not limited.is_set() and made < limit * 2 + 100:
                made += 1
                call = planner.next() if planner else Call("get_server_metrics", "-", "", {})
                answer = classify(await client.call_tool(call.tool, call.args))
                if answer.outcome == INTENDED:
                    limited.set()
                elif answer.outcome != OK:
                    raise RuntimeError(f"spending a key's budget: {call.tool} got {answer.outcome}")
                if planner:
                    planner.observe(call, answer.envelope)

    async with anyio.create_task_group() as tg:
        for i in range(concurrency):
            tg.start_soon(spend, i)
    if not limited.is_set():
        raise RuntimeError(f"the key was not rate limited after {made} calls (limit {limit})")
    return made


# -- statistics ------------------------------------------------------------------------------


def _latency_stats(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
        "mean": round(sum(values) / len(values), 2),
    }


def _group_stats(records: Sequence[CallRecord]) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "calls": len(records),
        "ok": sum(r.ok for r in records),
        **_latency_stats([r.latency_ms for r in records]),
    }
    p50, p99 = stats["p50"], stats["p99"]
    stats["p99_p50"] = round(p99 / p50, 2) if p50 and p99 is not None else None
    stats["errors"] = dict(Counter(r.outcome for r in records if not r.ok).most_common())
    hits = [r.cache_hit for r in records if r.ok and r.cache_hit is not None]
    stats["cache_hit_share"] = round(sum(hits) / len(hits), 3) if hits else None
    inside = [r.server_ms for r in records if r.server_ms is not None]
    stats["server_ms"] = _latency_stats(inside) if inside else None
    return stats


def summarize(records: Sequence[CallRecord], duration_s: float | None = None) -> dict[str, Any]:
    """Statistics of one phase's records.

    Throughput counts the normal clients' calls that ended within ``duration_s`` of the
    first call's start (without ``duration_s``: all calls over the span they cover).
    Latency percentiles, per tool and per tool and mode, cover every call of the normal
    clients, failed ones included (a timeout counts with its full wait). Errors are
    counted by code: ``unintended`` is every failure except RATE_LIMIT on the
    over-limit key, which is ``intended``."""
    normal = [r for r in records if not r.over_limit]
    over = [r for r in records if r.over_limit]
    if not records:
        start = end = 0.0
    else:
        start = min(r.start for r in records)
        end = max(r.end for r in records)
    window = duration_s if duration_s is not None else max(end - start, 1e-9)
    in_window = [r for r in normal if r.end <= start + window]
    unintended = Counter(r.outcome for r in records if not r.ok and not r.intended)
    intended = Counter(r.outcome for r in records if r.intended)
    tools: dict[str, Any] = {}
    for tool in [*TOOLS, SESSION]:
        group = [r for r in normal if r.tool == tool]
        if group:
            tools[tool] = _group_stats(group)
    modes: dict[str, Any] = {}
    for key in sorted({(r.tool, r.mode) for r in normal}, key=lambda k: (_tool_order(k[0]), k)):
        group = [r for r in normal if (r.tool, r.mode) == key]
        modes[f"{key[0]} {key[1]}" if key[1] != "-" else key[0]] = _group_stats(group)
    per_client = Counter(r.client for r in normal if r.tool != SESSION)
    hits = [r.cache_hit for r in normal if r.ok and r.cache_hit is not None]
    total = len(records)
    return {
        "clients": len({r.client for r in normal}),
        "duration_s": round(window, 3),
        "calls": len(normal),
        "ok": sum(r.ok for r in normal),
        "throughput_per_s": round(len(in_window) / window, 2) if window else None,
        "ok_per_s": round(sum(r.ok for r in in_window) / window, 2) if window else None,
        "latency_ms": _latency_stats([r.latency_ms for r in normal]),
        "unintended_errors": dict(unintended.most_common()),
        "unintended_error_count": sum(unintended.values()),
        "error_rate": round(sum(unintended.values()) / total, 5) if total else 0.0,
        "intended_errors": dict(intended.most_common()),
        "timeouts": unintended.get(TIMEOUT, 0),
        "cache_hit_share": round(sum(hits) / len(hits), 3) if hits else None,
        "max_calls_per_client": max(per_client.values()) if per_client else 0,
        "tools": tools,
        "modes": modes,
        "over_limit": {
            "calls": len(over),
            "rate_limited": intended.get(INTENDED, 0),
            "ok": sum(r.ok for r in over),
            "other": sum(1 for r in over if not r.ok and not r.intended),
        },
    }


def _tool_order(tool: str) -> int:
    return TOOLS.index(tool) if tool in TOOLS else len(TOOLS)


def assess(
    phase: dict[str, Any], previous: dict[str, Any], best_throughput: float, timeout_s: float
) -> tuple[list[str], list[str]]:
    """(broke, saturated) of an escalation phase against the one before it.

    It *gave* when: a call timed out; unintended errors exceed 1 % of calls; a tool's p99
    exceeds 5 x its p50; throughput collapsed below 3/4 of the best phase so far; or the
    server process died. It is *saturated* (noted, the escalation goes on) when throughput
    rose by less than 5 % over the previous phase."""
    s, before = phase["summary"], previous["summary"]
    broke: list[str] = []
    if not phase.get("server_alive", True):
        broke.append("the server process died")
    if s["timeouts"]:
        tools = Counter(
            tool for tool, t in s["tools"].items() for _ in range(t["errors"].get(TIMEOUT, 0))
        )
        broke.append(
            f"{s['timeouts']} calls timed out after {timeout_s:g} s "
            f"({', '.join(f'{t} {n}' for t, n in tools.most_common())})"
        )
    if s["error_rate"] > ERROR_RATE_LIMIT:
        where = "; ".join(
            f"{tool}: {', '.join(f'{c} {n}' for c, n in t['errors'].items())}"
            for tool, t in s["tools"].items()
            if t["errors"]
        )
        broke.append(
            f"unintended errors {s['error_rate']:.1%} of calls (limit {ERROR_RATE_LIMIT:.0%}): "
            + where
        )
    for tool, t in s["tools"].items():
        if tool != SESSION and t["p99_p50"] is not None and t["p99_p50"] > P99_P50_LIMIT:
            broke.append(
                f"{tool} p99/p50 = {t['p99_p50']:.1f} (limit {P99_P50_LIMIT:g}): "
                f"p50 {t['p50']:.0f} ms, p99 {t['p99']:.0f} ms"
            )
    growth = s["throughput_per_s"] / before["throughput_per_s"] if before["throughput_per_s"] else 0
    change = (
        f"{before['throughput_per_s']:.0f} -> {s['throughput_per_s']:.0f} calls/s "
        f"(x{growth:.2f}) with x{s['clients'] / before['clients']:.1f} clients; median "
        f"latency {_fmt(before['latency_ms']['p50'], 0)} -> {_fmt(s['latency_ms']['p50'], 0)} ms"
    )
    if s["throughput_per_s"] < COLLAPSE * best_throughput:
        broke.append(
            f"throughput collapsed below {COLLAPSE:.0%} of the best phase "
            f"({best_throughput:.0f} calls/s): {change}"
        )
    saturated = [f"throughput no longer rising: {change}"] if growth < RISING else []
    return broke, saturated


def diagnosis(phase: dict[str, Any]) -> list[str]:
    """Where the time went in a phase: CPU of each part, and the time inside the server's
    tool code (``execution_time_ms``) next to the latency the clients saw."""
    out: list[str] = []
    r = phase.get("resources")
    if r:
        cores = psutil.cpu_count() or 1
        line = (
            f"CPU: server process {r['server_pct']:.0f} %, PostgreSQL backends "
            f"{r['postgres_pct']:.0f} %, client processes {r['clients_pct']:.0f} % of one core; "
            f"the machine {r['system_pct']:.0f} % of {cores} cores"
        )
        per_call = r.get("cpu_ms_per_call")
        if per_call:
            line += (
                f"; per call: server {per_call['server']:.1f} ms, clients "
                f"{per_call['clients']:.1f} ms, PostgreSQL {per_call['postgres']:.1f} ms of CPU"
            )
        if r["server_pct"] >= 80:
            line += " - the server process is CPU-bound (one Python process, one GIL)"
        elif r["system_pct"] >= 90:
            line += (
                " - the machine's CPUs are saturated (server, PostgreSQL and clients share them)"
            )
        out.append(line)
    work = phase.get("server_work")
    if work and phase["summary"]["timeouts"]:
        out.append(
            f"the server finished {work['calls_completed_by_server']} calls for the "
            f"{work['calls_sent']} the clients sent, {work['completed_after_the_client_gave_up']}"
            f" of them after the client had given up ({phase['summary']['timeouts']} timed out)"
        )
    pairs = [
        f"{tool} {t['server_ms']['p50']:.1f} / {t['p50']:.1f} ms"
        for tool, t in phase["summary"]["tools"].items()
        if t.get("server_ms") and t["p50"] is not None
    ]
    if pairs:
        out.append(
            "p50 inside the server's tool code (execution_time_ms) / seen by the clients: "
            + ", ".join(pairs)
            + " (the rest is the MCP and HTTP layers on both sides, queueing for the server's "
            "event loop and worker threads, and waiting for a CPU)"
        )
    return out


# -- the knowledge base and the mix --------------------------------------------------------------


def build_knowledge_base(database: str, console: Console) -> str:
    """Create / bring ``database`` up to date with the sample corpus; its conninfo."""
    from extraction.pipeline import Rebuilder
    from sql.database import named_database, server_conninfo
    from sql.settings import DatabaseSettings

    db = named_database(server_conninfo(DatabaseSettings()), database)
    started = time.perf_counter()
    report = Rebuilder(db).run(SAMPLE)
    took = time.perf_counter() - started
    if report.up_to_date:
        console.print(f"{database}: up to date with {SAMPLE.relative_to(REPO)} ({took:.1f} s)")
    else:
        console.print(
            f"{database}: built from {SAMPLE.relative_to(REPO)} in {took:.0f} s "
            f"({report.totals.get('chunks', 0)} chunks)"
        )
    return db.conninfo


def mix_from_database(conninfo: str, *, per_vendor: int = 4) -> Mix:
    """Vendors (names, aliases), entity pairs and chunk ids that exist in the knowledge
    base. Entities are named when their name is unique in the vendor, else by id."""
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        q = bench_queries()
        vendors = conn.execute(q["load_vendors"]).fetchall()
        entities = conn.execute(q["load_entities"]).fetchall()
        relationships = conn.execute(q["load_relationships"]).fetchall()
        chunk_ids = [r["id"] for r in conn.execute(q["load_chunk_ids"])]
    by_id = {e["id"]: e for e in entities}
    names: list[list[str]] = []
    paths: list[tuple[str, str, str]] = []
    neighbors: list[tuple[str, str]] = []
    for v in vendors:
        variants = [v["name"], *v["aliases"], v["name"].lower(), v["name"].upper()]
        names.append(list(dict.fromkeys(variants)))

        def ref(entity_id: int, vendor_id: int = v["id"]) -> str:
            e = by_id[entity_id]
            own = e["vendor_id"] == vendor_id and e["same_name"] == 1
            return str(e["name"]) if own else str(entity_id)

        rels = [r for r in relationships if r["vendor_id"] == v["id"]]
        if not rels:
            continue
        outgoing: dict[int, list[int]] = {}
        for r in rels:
            outgoing.setdefault(r["source_id"], []).append(r["target_id"])
        pairs: list[tuple[int, int]] = []
        for r in rels:  # two hops where there are any, then one
            for nxt in outgoing.get(r["target_id"], []):
                if nxt != r["source_id"]:
                    pairs.append((r["source_id"], nxt))
        pairs += [(r["source_id"], r["target_id"]) for r in rels]
        for a, b in list(dict.fromkeys(pairs))[:per_vendor]:
            paths.append((v["name"], ref(a), ref(b)))
        hubs = Counter([r["source_id"] for r in rels] + [r["target_id"] for r in rels])
        for entity_id, _ in hubs.most_common(per_vendor):
            neighbors.append((v["name"], ref(entity_id)))
    if not names or not paths or not chunk_ids:
        raise RuntimeError("the knowledge base has no vendors with relationships or no chunks")
    return Mix(vendors=names, paths=paths, neighbors=neighbors, chunk_ids=chunk_ids)


async def probe_mix(url: str, key: str, mix: Mix) -> tuple[Mix, list[str]]:
    """Call every vendor name, path and neighbourhood of the mix once, and each search
    mode with each field set: drop names and entity pairs the server does not take
    (returned as notes) and fail on anything else that errs."""
    dropped: list[str] = []
    async with open_session(url, key) as client:

        async def outcome(tool: str, args: dict[str, Any]) -> str:
            result = await client.call_tool(tool, args)
            return classify(result).outcome

        vendors = []
        for names in mix.vendors:
            kept = []
            for name in names:
                got = await outcome("find_vendor_info", {"vendor_name": name})
                if got == OK:
                    kept.append(name)
                else:
                    dropped.append(f"vendor name {name!r}: {got}")
            if kept:
                vendors.append(kept)
        paths = []
        for vendor, a, b in mix.paths:
            args = {"vendor_name": vendor, "from_entity": a, "to_entity": b}
            got = await outcome("find_entity_path", args)
            if got == OK:
                paths.append((vendor, a, b))
            else:
                dropped.append(f"path {vendor}: {a} -> {b}: {got}")
        neighbors = []
        for vendor, entity in mix.neighbors:
            got = await outcome("get_entity_neighbors", {"vendor_name": vendor, "entity": entity})
            if got == OK:
                neighbors.append((vendor, entity))
            else:
                dropped.append(f"neighbours {vendor}: {entity}: {got}")
        core: list[tuple[str, dict[str, Any]]] = [
            ("list_vendors", {"page_size": 2}),
            ("get_chunk", {"chunk_id": mix.chunk_ids[0]}),
            ("get_server_metrics", {}),
        ]
        for mode, sets in FIELD_SETS.items():
            core.append(("semantic_search", {"query": mix.queries[0], "response_mode": mode}))
            core += [
                ("semantic_search", {"query": mix.queries[1], "response_mode": mode, "fields": f})
                for f in sets
            ]
        for tool, args in core:
            got = await outcome(tool, args)
            if got != OK:
                raise RuntimeError(f"{tool} {args} answered {got}: the mix or the server is broken")
    if not vendors or not paths or not neighbors:
        raise RuntimeError(
            "no vendor, path or neighbourhood of the mix works: " + "; ".join(dropped)
        )
    return replace(mix, vendors=vendors, paths=paths, neighbors=neighbors), dropped


# -- the server and what it costs ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``python -m server --transport streamable-http`` on 127.0.0.1, stderr to a file."""

    def __init__(self, env: dict[str, str], log_path: Path, *, startup_s: float = 180.0) -> None:
        self.port = _free_port()
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
                "--transport",
                "streamable-http",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.stop_offset: int | None = None
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError(
                    "the server exited at start-up: " + log_path.read_text(errors="replace")[-2000:]
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the server did not listen on port {self.port} in {startup_s:.0f} s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self._log.flush()
        self.stop_offset = self.log_path.stat().st_size
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()

    def problems(self) -> dict[str, Any]:
        """Tracebacks in the server's stderr (each as its last line), and how many other
        lines it wrote; those after ``stop()`` began are counted apart."""
        text = self.log_path.read_text(errors="replace")
        cut = self.stop_offset if self.stop_offset is not None else len(text)
        return {
            "log": str(self.log_path),
            "log_lines": len(text.splitlines()),
            "tracebacks": _tracebacks(text[:cut]),
            "tracebacks_at_shutdown": _tracebacks(text[cut:]),
        }


def _tracebacks(text: str) -> list[str]:
    """The exception line ending each ``Traceback`` block of a log."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Traceback (most recent call last)"):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1].isspace()):
                j += 1
            found.append(lines[j].strip() if j < len(lines) else "(truncated)")
    return found


class ResourceSampler:
    """CPU seconds of the server process, of PostgreSQL's backends serving ``database``,
    of this process and its other children (the clients) and of the whole machine,
    sampled every ``interval_s`` in a thread."""

    def __init__(self, server_pid: int, database: str, interval_s: float = 0.5) -> None:
        self.server = psutil.Process(server_pid)
        self.database = database
        self.interval_s = interval_s
        self.samples: list[dict[str, float]] = []
        self._stop = threading.Event()
        self._pg: dict[int, psutil.Process] = {}
        self._pg_scanned = 0.0
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @staticmethod
    def _cpu(proc: psutil.Process) -> float:
        try:
            t = proc.cpu_times()
            return float(t.user + t.system)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return 0.0

    def _postgres(self) -> list[psutil.Process]:
        if time.time() - self._pg_scanned > 3:
            self._pg_scanned = time.time()
            for proc in psutil.process_iter(["name", "cmdline"]):
                try:
                    cmd = " ".join(proc.info["cmdline"] or [])
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if cmd.startswith("postgres:") and f" {self.database} " in f"{cmd} ":
                    self._pg.setdefault(proc.pid, proc)
        return list(self._pg.values())

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                server_rss = float(self.server.memory_info().rss)
                threads = float(self.server.num_threads())
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                server_rss = threads = math.nan
            server_tree = {self.server.pid}
            with suppress(psutil.NoSuchProcess):
                server_tree |= {c.pid for c in self.server.children(recursive=True)}
            clients = [me] + [c for c in me.children(recursive=True) if c.pid not in server_tree]
            sys_times = psutil.cpu_times()
            busy = sum(sys_times) - sys_times.idle - getattr(sys_times, "iowait", 0.0)
            self.samples.append(
                {
                    "t": time.time(),
                    "server": self._cpu(self.server),
                    "postgres": sum(self._cpu(p) for p in self._postgres()),
                    "clients": sum(self._cpu(p) for p in clients),
                    "system": busy,
                    "server_rss_mb": server_rss / 2**20,
                    "server_threads": threads,
                }
            )
            self._stop.wait(self.interval_s)

    def window(self, t0: float, t1: float) -> dict[str, Any] | None:
        """Mean CPU between ``t0`` and ``t1``: each part in % of one core, the machine in %
        of all its cores; the server's largest RSS and thread count."""
        inside = [s for s in self.samples if t0 <= s["t"] <= t1]
        if len(inside) < 2:
            return None
        a, b = inside[0], inside[-1]
        span = b["t"] - a["t"]
        if span <= 0:
            return None

        def pct(k: str) -> float:
            return round(100 * (b[k] - a[k]) / span, 1)

        cores = psutil.cpu_count() or 1
        return {
            "server_pct": pct("server"),
            "postgres_pct": pct("postgres"),
            "clients_pct": pct("clients"),
            "system_pct": round(pct("system") / cores, 1),
            "server_rss_mb_max": round(max(s["server_rss_mb"] for s in inside), 1),
            "server_threads_max": max(s["server_threads"] for s in inside),
        }


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Plan:
    baseline_s: float
    clients: int
    duration_s: float
    levels: list[int]
    level_s: float
    workers: int
    timeout_s: float
    warmup_s: float
    key_limit: int
    over_limit_rate: float
    max_run_s: float
    keep_going: bool
    seed: int
    strict: bool = False


def _parse_levels(text: str) -> list[int]:
    levels = [int(x) for x in text.replace(" ", "").split(",") if x]
    if not levels or any(n < 1 for n in levels):
        raise argparse.ArgumentTypeError("levels are positive client counts, comma separated")
    return levels


def _phase_table(name: str, phase: dict[str, Any]) -> Table:
    s = phase["summary"]
    table = Table(
        title=(
            f"{name}: {s['clients']} client(s), {s['duration_s']:.0f} s, "
            f"{s['throughput_per_s']:.1f} calls/s, latency ms"
        )
    )
    table.add_column("tool", no_wrap=True)
    for col in ("calls", "p50", "p95", "p99", "p99/p50", "cache hits"):
        table.add_column(col, justify="right")
    table.add_column("errors by code")
    for tool, t in s["tools"].items():
        table.add_row(*_tool_cells(tool, t))
    table.add_row(*_tool_cells("all", {**s["latency_ms"], **_overall(s)}), style="bold")
    return table


def _overall(s: dict[str, Any]) -> dict[str, Any]:
    p50, p99 = s["latency_ms"]["p50"], s["latency_ms"]["p99"]
    return {
        "calls": s["calls"],
        "p99_p50": round(p99 / p50, 2) if p50 else None,
        "cache_hit_share": s["cache_hit_share"],
        "errors": s["unintended_errors"],
    }


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _tool_cells(tool: str, t: dict[str, Any]) -> list[str]:
    ratio = t.get("p99_p50")
    ratio_text = _fmt(ratio)
    if ratio is not None and ratio > P99_P50_LIMIT:
        ratio_text += " !"
    hit = t.get("cache_hit_share")
    return [
        tool,
        str(t["calls"]),
        _fmt(t["p50"]),
        _fmt(t["p95"]),
        _fmt(t["p99"]),
        ratio_text,
        "-" if hit is None else f"{hit:.0%}",
        ", ".join(f"{c} {n}" for c, n in t["errors"].items()) or "0",
    ]


def _phase_line(phase: dict[str, Any]) -> str:
    s = phase["summary"]
    o = s["over_limit"]
    parts = [
        f"{phase['name']}: {s['calls']} calls, {s['throughput_per_s']:.1f} calls/s",
        f"p50 {_fmt(s['latency_ms']['p50'])} / p99 {_fmt(s['latency_ms']['p99'])} ms",
        f"unintended errors {s['unintended_error_count']}",
        "cache hits "
        + ", ".join(
            f"{label} {t['cache_hit_share']:.0%}"
            for tool, label in (("semantic_search", "search"), ("find_vendor_info", "vendor"))
            if (t := s["tools"].get(tool)) and t["cache_hit_share"] is not None
        )
        + f" (all answers {_fmt(100 * (s['cache_hit_share'] or 0), 0)} %)",
    ]
    if o["calls"]:
        parts.append(f"over-limit key: {o['rate_limited']} of {o['calls']} RATE_LIMIT (intended)")
    r = phase.get("resources")
    if r:
        parts.append(
            f"CPU server {r['server_pct']:.0f} %, postgres {r['postgres_pct']:.0f} %, "
            f"clients {r['clients_pct']:.0f} % of a core; machine {r['system_pct']:.0f} %"
        )
    return "; ".join(parts)


def _verdict(baseline: dict[str, Any], target: dict[str, Any]) -> list[dict[str, Any]]:
    s, b = target["summary"], baseline["summary"]
    checks: list[dict[str, Any]] = [
        {
            "check": "errors other than intended rate limits",
            "value": s["unintended_error_count"],
            "limit": 0,
            "text": (
                f"unintended errors = {s['unintended_error_count']} (limit 0)"
                + (f": {s['unintended_errors']}" if s["unintended_errors"] else "")
                + f"; intended RATE_LIMIT = {s['over_limit']['rate_limited']}"
            ),
            "met": s["unintended_error_count"] == 0,
        }
    ]
    for tool, t in s["tools"].items():
        if tool == SESSION:
            continue
        checks.append(
            {
                "check": f"{tool} p99 <= 5 x p50",
                "value": t["p99_p50"],
                "limit": P99_P50_LIMIT,
                "text": f"{tool} p99/p50 = {_fmt(t['p99_p50'])} (limit {P99_P50_LIMIT:g})",
                "met": t["p99_p50"] is not None and t["p99_p50"] <= P99_P50_LIMIT,
            }
        )
    ratio = s["throughput_per_s"] / b["throughput_per_s"] if b["throughput_per_s"] else None
    checks.append(
        {
            "check": "throughput against the single-client baseline",
            "value": round(ratio, 2) if ratio else None,
            "limit": None,
            "text": (
                f"throughput {s['clients']} clients / 1 client = {_fmt(ratio, 2)}x "
                f"({s['throughput_per_s']:.1f} / {b['throughput_per_s']:.1f} calls/s)"
            ),
            "met": None,
        }
    )
    return checks


def _markdown(result: dict[str, Any]) -> str:
    md = [
        f"# MCP server under load ({result['date']})",
        "",
        f"`{result['command']}` on {result['machine']['cpus']} CPUs "
        f"({result['machine']['platform']}); knowledge base `{result['settings']['database']}` "
        f"(the sample corpus); {result['settings']['workers']} client worker processes; "
        f"per-call timeout {result['settings']['timeout_s']:g} s; cache hits are "
        "`execution_context.cache_hit` of successful calls.",
        "",
    ]
    for phase in result["phases"]:
        s = phase["summary"]
        md += [
            f"## {phase['name']}: {s['clients']} client(s), {s['duration_s']:.0f} s",
            "",
            _phase_line(phase),
            "",
            "| tool | calls | p50 ms | p95 ms | p99 ms | p99/p50 | cache hits | errors by code |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for tool, t in s["tools"].items():
            md.append("| " + " | ".join(_tool_cells(tool, t)) + " |")
        md.append(
            "| **all** | "
            + " | ".join(_tool_cells("all", {**s["latency_ms"], **_overall(s)})[1:])
            + " |"
        )
        md.append("")
        if phase["name"] == "target":
            md += [
                "By tool and mode:",
                "",
                "| tool and mode | calls | p50 ms | p95 ms | p99 ms | p99/p50 | cache hits "
                "| errors by code |",
                "|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            md += ["| " + " | ".join(_tool_cells(k, t)) + " |" for k, t in s["modes"].items()]
            md.append("")
        md += [f"{line}" for line in diagnosis(phase)]
        md.append("")
    md += ["## Verdict (target run against its targets)", ""]
    for check in result["verdict"]:
        mark = "" if check["met"] is None else (" - met" if check["met"] else " - **missed**")
        md.append(f"- {check['text']}{mark}")
    esc = result["escalation"]
    md += ["", "## Escalation", "", esc["summary"], ""]
    if esc["saturation"]:
        md += [f"Saturated at {esc['saturated_at']} clients:", ""]
        md += [f"- {reason}" for reason in esc["saturation"]]
        md.append("")
    if esc["reasons"]:
        md += [f"Gave at {esc['gave_at']} clients:", ""]
        md += [f"- {reason}" for reason in esc["reasons"] + esc["diagnosis"]]
    problems = result["server_log"]
    md += [
        "",
        "## Server log",
        "",
        f"{len(problems['tracebacks'])} traceback(s) while serving"
        + (": " + "; ".join(problems["tracebacks"][:10]) if problems["tracebacks"] else "")
        + f"; {len(problems['tracebacks_at_shutdown'])} at shutdown.",
    ]
    if result["mix"]["dropped"]:
        md += ["", "Mix entries the server refused at the probe (left out of the load):", ""]
        md += [f"- {d}" for d in result["mix"]["dropped"]]
    return "\n".join(md) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    full = {
        "clients": 50,
        "duration": 60.0,
        "baseline": 15.0,
        "levels": [100, 200, 400, 800],
        "level_duration": 20.0,
        "warmup": 5.0,
        "key_limit": 3000,
    }
    quick = full | {
        "clients": 10,
        "duration": 8.0,
        "baseline": 3.0,
        "levels": [20, 40],
        "level_duration": 5.0,
        "warmup": 2.0,
        "key_limit": 2000,
    }
    parser.add_argument("--clients", type=int, help="clients of the target run [50]")
    parser.add_argument("--duration", type=float, help="target run, s [60]")
    parser.add_argument("--baseline", type=float, help="single-client run, s [15]")
    parser.add_argument(
        "--levels", type=_parse_levels, help="escalation client counts [100,200,400,800]"
    )
    parser.add_argument("--level-duration", type=float, help="per escalation level, s [20]")
    parser.add_argument(
        "--keep-going", action="store_true", help="run every level even after one gave"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="client processes for multi-client phases [2]"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="per-call timeout, s [10]")
    parser.add_argument(
        "--warmup", type=float, help="unmeasured warm-up without an over-limit client, s [5]"
    )
    parser.add_argument(
        "--key-limit",
        type=int,
        help="calls each key may make in the run (BMCIS_RATE_LIMIT_MINUTE/_HOUR/_DAY) [3000]",
    )
    parser.add_argument(
        "--over-limit-rate",
        type=float,
        default=4.0,
        help="calls/s of the client on an exhausted key, 0: none [4]",
    )
    parser.add_argument(
        "--max-run-time", type=float, default=1200.0, help="skip phases past this, s [1200]"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when the target run misses a target"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default=DATABASE, help=f"benchmark database [{DATABASE}]")
    parser.add_argument("--out", type=Path, default=RESULTS / "load.json")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 s baseline, 10 clients for 8 s, levels 20,40 for 5 s, a 2000-call "
        "key limit (options given explicitly still win)",
    )
    args = parser.parse_args(argv)
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.clients < 2 or args.duration <= 0 or args.baseline <= 0 or args.workers < 1:
        parser.error("--clients must be >= 2, durations > 0, --workers >= 1")
    plan = Plan(
        baseline_s=args.baseline,
        clients=args.clients,
        duration_s=args.duration,
        levels=[n for n in args.levels if n > args.clients],
        level_s=args.level_duration,
        workers=args.workers,
        timeout_s=args.timeout,
        warmup_s=args.warmup,
        key_limit=args.key_limit,
        over_limit_rate=args.over_limit_rate,
        max_run_s=args.max_run_time,
        keep_going=args.keep_going,
        seed=args.seed,
        strict=args.strict,
    )
    return _run(
        plan, args.database, args.out, " ".join(["python -m bench.load", *(argv or sys.argv[1:])])
    )


def _run(plan: Plan, database: str, out: Path, command: str) -> int:
    from server.auth import KeyStore
    from sql.database import Database

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)
    began = time.monotonic()
    conninfo = build_knowledge_base(database, console)
    mix = mix_from_database(conninfo)
    work = Path(tempfile.mkdtemp(prefix="kb-bench-load-"))
    keys_file = work / "keys.json"  # none: keys live in the database
    store = KeyStore(Database(conninfo, None))
    run = f"load-{secrets.token_hex(4)}"  # key names, unique to this run
    n_keys = max([plan.clients, *plan.levels])
    console.print(f"creating {n_keys + 3} API keys (one per client) ...")
    probe_key = store.create(f"{run}-probe")
    baseline_key = store.create(f"{run}-baseline")
    over_key = store.create(f"{run}-over-limit")
    client_keys = [store.create(f"{run}-client-{i}") for i in range(n_keys)]
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"} | {
        "DATABASE_URL": conninfo,
        "KB_API_KEYS_FILE": str(keys_file),
        "LOG_LEVEL": "WARNING",
        # every key may make key_limit calls in the whole run: the normal mix stays under it
        "BMCIS_RATE_LIMIT_MINUTE": str(plan.key_limit),
        "BMCIS_RATE_LIMIT_HOUR": str(plan.key_limit),
        "BMCIS_RATE_LIMIT_DAY": str(plan.key_limit),
    }
    console.print("starting the server ...")
    server = ServerProcess(env, work / "server.log")
    sampler = ResourceSampler(server.pid, database)
    sampler.start()
    phases: list[dict[str, Any]] = []
    escalation: dict[str, Any] = {
        "saturated_at": None,
        "saturation": [],
        "gave_at": None,
        "reasons": [],
        "diagnosis": [],
        "summary": "",
    }
    spent = 0
    dropped: list[str] = []
    try:
        mix, dropped = anyio.run(probe_mix, server.url, probe_key, mix)
        console.print(
            f"mix: {len(mix.vendors)} vendors, {len(mix.paths)} paths, "
            f"{len(mix.neighbors)} neighbourhoods, {len(mix.chunk_ids)} chunks"
            + (f"; {len(dropped)} entries refused at the probe" if dropped else "")
        )
        if plan.over_limit_rate > 0:
            console.print(
                f"warm-up (not measured): spending the over-limit key's {plan.key_limit} calls "
                "on the normal mix from 8 sessions ..."
            )
            t0 = time.monotonic()
            spent = anyio.run(_exhaust, server.url, over_key, plan.key_limit, mix, plan.seed)
            console.print(f"  {spent} calls in {time.monotonic() - t0:.0f} s")
        elif plan.warmup_s:
            console.print(f"warm-up (not measured): 1 client, {plan.warmup_s:g} s")
            anyio.run(_run_phase, server.url, [probe_key], 1, plan.warmup_s, mix, plan, 1, None)

        def phase(
            name: str, keys: list[str], n: int, seconds: float, workers: int
        ) -> dict[str, Any]:
            over = over_key if plan.over_limit_rate > 0 and n > 1 else None
            before = anyio.run(_server_calls, server.url, probe_key)
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            ) as progress:
                task = progress.add_task(f"{name}: {n} client(s)", total=seconds)
                stop = threading.Event()

                def tick() -> None:
                    t0 = time.monotonic()
                    while not stop.wait(0.5):
                        progress.update(task, completed=min(seconds, time.monotonic() - t0))

                ticker = threading.Thread(target=tick, daemon=True)
                ticker.start()
                try:
                    records = anyio.run(
                        _run_phase, server.url, keys, n, seconds, mix, plan, workers, over
                    )
                finally:
                    stop.set()
                    ticker.join()
            summary = summarize(records, seconds)
            t0 = min((r.start for r in records), default=time.time())
            resources = sampler.window(t0, t0 + seconds)
            if resources and summary["throughput_per_s"]:
                resources["cpu_ms_per_call"] = {
                    part: round(10 * resources[f"{part}_pct"] / summary["throughput_per_s"], 2)
                    for part in ("server", "clients", "postgres")
                }
            result: dict[str, Any] = {
                "name": name,
                "clients": n,
                "workers": workers,
                "duration_s": seconds,
                "summary": summary,
                "resources": resources,
                "server_alive": server.alive(),
                "server_work": None,
            }
            if server.alive() and before is not None:
                done = anyio.run(_server_calls_settled, server.url, probe_key, before)
                calls = [r for r in records if r.tool != SESSION]
                answered = [r for r in calls if r.outcome not in (TIMEOUT, CANCELLED)]
                result["server_work"] = {
                    "calls_sent": len(calls),
                    "answers_received": len(answered),
                    "calls_completed_by_server": done,
                    "completed_after_the_client_gave_up": max(0, done - len(answered)),
                }
            console.print(_phase_table(name, result))
            console.print(_phase_line(result), highlight=False)
            return result

        baseline = phase("baseline", [baseline_key], 1, plan.baseline_s, 1)
        phases.append(baseline)
        if baseline["summary"]["calls"] > 0.8 * plan.key_limit:
            console.print(
                f"[yellow]the baseline client made {baseline['summary']['calls']} of the "
                f"{plan.key_limit} calls its key may make: raise --key-limit[/]"
            )
        target = phase("target", client_keys, plan.clients, plan.duration_s, plan.workers)
        phases.append(target)
        previous = target
        best = max(baseline["summary"]["throughput_per_s"], target["summary"]["throughput_per_s"])
        for n in plan.levels:
            if time.monotonic() - began + plan.level_s + 60 > plan.max_run_s:
                escalation["summary"] = (
                    f"Stopped before {n} clients: --max-run-time {plan.max_run_s:g} s reached. "
                )
                break
            if not server.alive():
                escalation["summary"] = "The server process died. "
                break
            level = phase(f"escalation {n}", client_keys, n, plan.level_s, plan.workers)
            phases.append(level)
            broke, saturated = assess(level, previous, best, plan.timeout_s)
            best = max(best, level["summary"]["throughput_per_s"])
            if saturated and escalation["saturated_at"] is None:
                escalation["saturated_at"] = n
                escalation["saturation"] = saturated + diagnosis(level)
                console.print(f"saturated at {n} clients: {saturated[0]}", highlight=False)
            if broke and escalation["gave_at"] is None:
                escalation["gave_at"] = n
                escalation["reasons"] = broke
                escalation["diagnosis"] = diagnosis(level)
                console.print(f"[bold]It gave at {n} clients:[/]")
                for reason in broke + escalation["diagnosis"]:
                    console.print(f"  - {reason}", highlight=False)
                if not plan.keep_going:
                    break
            previous = level
    finally:
        sampler.stop()
        server.stop()
    escalation["summary"] += _escalation_summary(escalation, phases)
    log = server.problems()
    kept_log = out.with_name(out.stem + "-server.log")
    if log["tracebacks"]:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(server.log_path, kept_log)
        log["log"] = str(kept_log)
        console.print(
            f"[red]{len(log['tracebacks'])} traceback(s) in the server log[/] "
            f"(kept as {kept_log}): " + "; ".join(sorted(set(log["tracebacks"]))[:5])
        )
    verdict = _verdict(phases[0], phases[1])
    console.print("[bold]Target run against the targets[/]")
    for check in verdict:
        mark = (
            "" if check["met"] is None else ("[green]met[/]" if check["met"] else "[red]missed[/]")
        )
        console.print(f"  {check['text']} {mark}", highlight=False)
    console.print(escalation["summary"], highlight=False)
    most = max(p["summary"]["max_calls_per_client"] for p in phases)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": command,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": psutil.cpu_count(),
            "cpus_physical": psutil.cpu_count(logical=False),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {
            **asdict(plan),
            "database": database,
            "corpus": str(SAMPLE.relative_to(REPO)),
            "calls_allowed_per_key": plan.key_limit,
            "over_limit_calls_spent": spent,
            "most_calls_by_one_client_in_a_phase": most,
            "server_env": {
                k: env[k] for k in sorted(env) if k.startswith(("BMCIS_RATE", "LOG_LEVEL"))
            },
            "targets": {
                "unintended_errors": 0,
                "p99_over_p50": P99_P50_LIMIT,
                "gives": {
                    "timeouts_above": 0,
                    "error_rate_above": ERROR_RATE_LIMIT,
                    "p99_over_p50_above": P99_P50_LIMIT,
                    "throughput_below_share_of_best": COLLAPSE,
                },
                "saturated": {"throughput_growth_below": RISING},
            },
        },
        "mix": {**mix.describe(), "dropped": dropped},
        "phases": phases,
        "verdict": verdict,
        "escalation": escalation,
        "server_log": log,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    out.with_suffix(".md").write_text(_markdown(result))
    console.print(f"results: {out} and {out.with_suffix('.md')}")
    shutil.rmtree(work, ignore_errors=True)
    missed = any(c["met"] is False for c in verdict)
    return 1 if log["tracebacks"] or (plan.strict and missed) else 0


def _escalation_summary(escalation: dict[str, Any], phases: list[dict[str, Any]]) -> str:
    levels = [p["clients"] for p in phases if p["name"].startswith("escalation")]
    if not levels:
        return "No escalation level was run."
    text = ""
    if escalation["saturated_at"] is not None:
        text += f"Throughput stopped rising at {escalation['saturated_at']} clients. "
    if escalation["gave_at"] is not None:
        text += f"It gave at {escalation['gave_at']} clients."
    else:
        text += f"Nothing gave up to {max(levels)} clients."
    return text


async def _run_phase(
    url: str,
    keys: list[str],
    n: int,
    seconds: float,
    mix: Mix,
    plan: Plan,
    workers: int,
    over_key: str | None,
) -> list[CallRecord]:
    return await run_clients(
        url,
        keys,
        n,
        seconds,
        mix,
        workers=workers,
        timeout_s=plan.timeout_s,
        over_limit_key=over_key,
        over_limit_rate=plan.over_limit_rate,
        seed=plan.seed * 7919 + n,
    )


async def _server_calls(url: str, key: str) -> int | None:
    """``total_calls`` of get_server_metrics (calls the server finished, this one not yet)."""
    async with open_session(url, key) as client:
        answer = classify(await client.call_tool("get_server_metrics", {}))
    results = (answer.envelope or {}).get("results")
    total = results.get("total_calls") if isinstance(results, dict) else None
    return total if isinstance(total, int) else None


async def _server_calls_settled(url: str, key: str, before: int, wait_s: float = 30.0) -> int:
    """Calls the server finished since ``before`` was read, once it has stopped finishing
    calls (the work of calls whose clients gave up included); the reads left out."""
    reads = 1  # the read that gave ``before``
    last = before
    deadline = time.monotonic() + wait_s
    while True:
        now = await _server_calls(url, key)
        reads += 1
        if now is None:
            break
        settled = now - last == 1  # nothing but the previous read finished in between
        last = now
        if settled or time.monotonic() > deadline:
            break
        await anyio.sleep(1.0)
    return last - before - (reads - 1)


async def _exhaust(url: str, key: str, limit: int, mix: Mix, seed: int) -> int:
    return await exhaust_key(url, key, limit=limit, mix=mix, concurrency=8, seed=seed)


if __name__ == "__main__":
    raise SystemExit(main())
