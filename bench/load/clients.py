"""The load generator: MCP client sessions over streamable HTTP (:func:`open_session`),
closed loops of calls spread over worker processes (:func:`run_clients`), and the
spending of one key's whole budget (:func:`exhaust_key`)."""

from __future__ import annotations

import math
import multiprocessing
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import astuple, dataclass
from multiprocessing.connection import Connection
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.load.records import (
    CANCELLED,
    INTENDED,
    OK,
    SESSION,
    TIMEOUT,
    Answer,
    CallRecord,
    classify,
)
from bench.load.workload import Call, Mix, Planner
from server.sdk import http_timeouts, share_output_schema_validator

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


def _exception_name(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return type(exc).__name__


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
