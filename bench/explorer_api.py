"""The explorer's ``/api/`` against the MCP tool in process: part 5 of ``bench.explorer``.

Each call is timed four ways, interleaved, on the same database with the same settings:

- ``api``: ``POST /api/tools/<name>`` on the running server through a keep-alive
  connection of the standard library's ``http.client``, which adds little of its own
  (the explorer's own client is the browser's native ``fetch``);
- ``api_httpx``: the same request through ``httpx2``, a full-featured Python client,
  whose own parsing costs about a millisecond a call, shown for comparison;
- ``mcp``: the MCP tool in this process: ``tools/call`` through an SDK client session
  connected in memory to the server ``create_server`` makes (the MCP protocol, the
  tool's argument and result handling, no transport), timed inside its event loop;
- ``service``: ``Service.call`` in this process, the frame both paths share (no
  protocol at all), the floor under both.

The target of the issue is ``api`` within 1.2 x ``mcp``; the ratio to ``service``
is reported beside it.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx2
import orjson
from anyio.from_thread import start_blocking_portal
from pydantic import SecretStr

from search.embedder import Embedder
from search.metrics import percentile
from server.service import Service
from server.settings import ServerSettings
from sql.database import Database

Call = tuple[str, dict[str, Any]]
#: How each call is made (module docstring).
_WAYS = ("api", "api_httpx", "mcp", "service")


class LeanClient:
    """``POST`` JSON over one keep-alive ``http.client`` connection."""

    def __init__(self, base: str, key: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.headers = {"X-API-Key": key, "Content-Type": "application/json"}

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        self.conn.request("POST", path, body=orjson.dumps(body), headers=self.headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.conn.close()


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return (time.perf_counter() - start) * 1000, out


def compare_api(
    base: str,
    db: Database,
    embedder: Embedder,
    key: str,
    calls: list[Call],
    repeats: int,
    *,
    caches: bool,
) -> dict[str, dict[str, Any]]:
    """p50 ms of each call four ways (module docstring), the first of each a warm-up,
    and the ratios of ``api`` to ``mcp`` and to ``service``; in process with the
    server's caches (``caches``) or without."""
    from mcp import Client

    from server.app import create_server

    settings = ServerSettings(
        api_key=SecretStr(key),
        rate_limit_minute=10**6,
        rate_limit_hour=10**7,
        rate_limit_day=10**8,
    )
    if not caches:
        settings = settings.model_copy(update={"search_cache_ttl": 0, "vendor_cache_ttl": 0})

    service = Service(settings, db, embedder=embedder)
    server = create_server(settings, lambda: Service(settings, db, embedder=embedder))
    lean = LeanClient(base, key)
    out: dict[str, dict[str, Any]] = {}
    try:
        with (
            httpx2.Client(base_url=base, headers={"X-API-Key": key}, timeout=60) as http,
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(Client(server)) as client,
        ):
            for name, args in calls:
                times: dict[str, list[float]] = {k: [] for k in _WAYS}
                path = f"/api/tools/{name}"
                for i in range(repeats + 1):
                    took = {
                        "api": _timed(partial(lean.post, path, args)),
                        "api_httpx": _timed(partial(http.post, path, json=args)),
                        "mcp": portal.call(_mcp_call, client, name, args),
                        "service": _timed(partial(service.call, name, key, args)),
                    }
                    _check(name, args, took)
                    if i:  # the first of each is a warm-up
                        for way, (ms, _) in took.items():
                            times[way].append(ms)
                p50 = {way: percentile(values, 50) for way, values in times.items()}
                out[f"{name} {json.dumps(args, sort_keys=True)}"] = {
                    **{f"{way}_p50_ms": round(ms, 2) for way, ms in p50.items()},
                    "ratio": round(p50["api"] / p50["mcp"], 2),
                    "ratio_to_service": round(p50["api"] / p50["service"], 2),
                }
    finally:
        lean.close()
        service.close()
    return out


async def _mcp_call(client: Any, name: str, args: dict[str, Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await client.call_tool(name, args)
    return (time.perf_counter() - start) * 1000, result


def _check(name: str, args: dict[str, Any], took: dict[str, tuple[float, Any]]) -> None:
    """Every way answered without an error."""
    status, body = took["api"][1]
    if status != 200:
        raise SystemExit(f"/api/tools/{name} {args}: {body[:300]!r}")
    response = took["api_httpx"][1]
    if response.status_code != 200:
        raise SystemExit(f"/api/tools/{name} {args} (httpx): {response.text[:300]}")
    if took["mcp"][1].is_error:
        raise SystemExit(f"MCP {name} {args}: {took['mcp'][1].content}")
    env, failed = took["service"][1]
    if failed:
        raise SystemExit(f"{name} {args}: {env['error']}")


__all__ = ["LeanClient", "compare_api"]
