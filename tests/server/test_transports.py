"""``python -m server`` as a real process: the SDK's client over stdio and streamable HTTP,
the MCP Inspector CLI (npm) over stdio, start-up failures as one error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from server.auth import KeyStore, digest
from server.sdk import http_client
from server.tools import TOOLS
from sql.database import Database
from tests.fixtures import REPO
from tests.fixtures.cli import run_module
from tests.fixtures.reliability import record
from tests.fixtures.server import start_http, stop

pytestmark = pytest.mark.slow

INSPECTOR = REPO / ".ci" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture()
def keyed(tmp_path: Path, sample_kb: Database) -> tuple[dict[str, str], str]:
    """Environment of a server process on the sample knowledge base, and its key."""
    keys = tmp_path / "keys.json"  # none: keys live in the database
    key = KeyStore(sample_kb).create(f"transport-{uuid.uuid4().hex[:8]}")
    env = {
        **os.environ,
        "DATABASE_URL": sample_kb.conninfo,
        "KB_API_KEYS_FILE": str(keys),
        "BMCIS_API_KEY": key,
        "LOG_LEVEL": "WARNING",
    }
    return env, key


@pytest.mark.parametrize(
    ("plain_paths", "streams"),
    [("", "streams on the event loop's pipes"), ("stdio", "the SDK's streams")],
)
def test_stdio_session_with_the_sdk_client(
    keyed: tuple[dict[str, str], str], tmp_path: Path, plain_paths: str, streams: str
) -> None:
    """Over the server's own stdio streams (speed layer stdio) and the SDK's."""
    env, _ = keyed
    env = env | {"KB_PLAIN_PATHS": plain_paths, "LOG_LEVEL": "INFO"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "server"], env=env, cwd=str(REPO)
    )
    log = tmp_path / "server.log"

    async def main() -> Any:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = await client.list_tools()
                found = await client.call_tool(
                    "semantic_search", {"query": "iOS 17 end of support", "top_k": 3}
                )
                vendor = await client.call_tool("find_vendor_info", {"vendor_name": "Apple Inc"})
                return tools, found, vendor

    tools, found, vendor = anyio.run(main)
    assert {t.name for t in tools.tools} == {t.name for t in TOOLS}
    assert not found.is_error and found.structured_content["results"][0]["rank"] == 1
    assert vendor.structured_content["results"]["vendor_name"] == "Apple"
    assert f"stdio: {streams}" in log.read_text()


@pytest.fixture()
def http_server(keyed: tuple[dict[str, str], str]) -> Iterator[tuple[str, str]]:
    env, key = keyed
    env = {k: v for k, v in env.items() if k != "BMCIS_API_KEY"}  # HTTP clients send theirs
    proc, url = start_http(env)
    try:
        yield url, key
    finally:
        stop(proc)


def _http_call(url: str, headers: dict[str, str], tool: str, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with (
            http_client(headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await client.call_tool(tool, args)

    return anyio.run(main)


def test_http_listens_on_loopback_only_by_default(http_server: tuple[str, str]) -> None:
    import psutil

    url, _ = http_server
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    listening = [
        c.laddr
        for c in psutil.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port
    ]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening), listening
    record("security_loopback_bind", listening=[f"{a.ip}:{a.port}" for a in listening])


def test_streamable_http_with_bearer_and_x_api_key(http_server: tuple[str, str]) -> None:
    url, key = http_server
    bearer = _http_call(url, {"Authorization": f"Bearer {key}"}, "list_vendors", {})
    assert not bearer.is_error and bearer.structured_content["pagination"]["total_available"] > 5
    header = _http_call(
        url,
        {"X-API-Key": key},
        "find_vendor_info",
        {"vendor_name": "microsoft", "response_mode": "preview"},
    )
    assert len(header.structured_content["results"]["entities"]) == 5
    missing = _http_call(url, {}, "list_vendors", {})
    assert missing.is_error and missing.structured_content["error"]["code"] == "AUTH_REQUIRED"
    wrong = _http_call(url, {"Authorization": "Bearer kb_not_a_key"}, "list_vendors", {})
    assert wrong.structured_content["error"]["code"] == "AUTH_INVALID"
    assert "kb_not_a_key" not in json.dumps(wrong.structured_content)


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def _raw_call(url: str, key: str, tool: str, args: dict[str, Any]) -> Any:
    """One tools/call posted as a client would (initialize first), the raw response."""
    import httpx2

    headers = {"X-API-Key": key, "Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=30) as http:
        init = http.post(url, headers=headers, json=_INITIALIZE)
        session = init.headers.get("mcp-session-id")
        if session:
            headers["mcp-session-id"] = session
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, headers=headers, json=ready)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": tool, "arguments": args}
        return http.post(url, headers=headers, json=call)


def test_http_answers_calls_as_json_by_default_or_as_an_sse_stream(
    http_server: tuple[str, str], keyed: tuple[dict[str, str], str]
) -> None:
    url, key = http_server
    plain = _raw_call(url, key, "list_vendors", {"page_size": 2})
    assert plain.headers["content-type"].startswith("application/json")
    assert len(plain.json()["result"]["structuredContent"]["results"]) == 2
    env = {k: v for k, v in keyed[0].items() if k != "BMCIS_API_KEY"}
    proc, sse_url = start_http(env, None, "--http-response", "sse")
    try:
        streamed = _raw_call(sse_url, key, "list_vendors", {"page_size": 2})
        sdk = _http_call(sse_url, {"X-API-Key": key}, "list_vendors", {"page_size": 2})
    finally:
        stop(proc)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    data = [line[5:] for line in streamed.text.splitlines() if line.startswith("data:")]
    assert json.loads(data[-1])["result"]["structuredContent"]["pagination"]["returned_count"] == 2
    assert not sdk.is_error and len(sdk.structured_content["results"]) == 2


def test_oversized_http_bodies_are_refused(http_server: tuple[str, str]) -> None:
    import httpx2

    url, key = http_server
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "semantic_search", "arguments": {"query": "x" * 300_000}},
    }
    response = httpx2.post(
        url,
        json=body,
        headers={"X-API-Key": key, "Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    assert response.status_code == 413
    record("security_body_limit", body_bytes=len(response.request.content), status=413)


def test_keys_never_reach_the_logs(keyed: tuple[dict[str, str], str]) -> None:
    env, key = keyed
    env = {k: v for k, v in env.items() if k != "BMCIS_API_KEY"} | {"LOG_LEVEL": "DEBUG"}
    proc, url = start_http(env)
    try:
        good = _http_call(
            url, {"Authorization": f"Bearer {key}"}, "semantic_search", {"query": "x" * 600}
        )  # an error path, logged at DEBUG
        bad = _http_call(url, {"X-API-Key": "kb_wrong_secret_value"}, "list_vendors", {})
    finally:
        log = stop(proc)
    assert good.structured_content["error"]["code"] == "QUERY_TOO_LONG"
    assert bad.structured_content["error"]["code"] == "AUTH_INVALID"
    assert log, "the server logged nothing at DEBUG: the test would prove nothing"
    assert key not in log and "kb_wrong_secret_value" not in log
    assert "password" not in log.lower()
    record("security_keys_not_logged", debug_log_lines=len(log.splitlines()), keys_found=0)


def _inspector(env: dict[str, str], *args: str) -> Any:
    assert INSPECTOR.exists(), (
        f"{INSPECTOR} is missing: `make inspector` installs the MCP Inspector CLI from npm"
    )
    proc = subprocess.run(
        [
            str(INSPECTOR),
            "--cli",
            "-e",
            f"BMCIS_API_KEY={env['BMCIS_API_KEY']}",
            "-e",
            f"KB_API_KEYS_FILE={env['KB_API_KEYS_FILE']}",
            "-e",
            f"DATABASE_URL={env['DATABASE_URL']}",
            sys.executable,
            "-m",
            "server",
            *args,
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_mcp_inspector_cli_lists_and_calls_tools(keyed: tuple[dict[str, str], str]) -> None:
    env, _ = keyed
    listed = _inspector(env, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} >= {"semantic_search", "find_vendor_info"}
    called = _inspector(
        env,
        "--method",
        "tools/call",
        "--tool-name",
        "find_vendor_info",
        "--tool-arg",
        "vendor_name=microsoft corp",
    )
    envelope = called["structuredContent"]
    assert envelope["results"]["vendor_name"] == "Microsoft"
    assert envelope["_metadata"]["status"] == "success"


@pytest.mark.parametrize(
    ("env_change", "message", "code"),
    [
        ({"MAX_TOKENS_PER_RESPONSE": "lots"}, "MAX_TOKENS_PER_RESPONSE", 2),
        ({"DEFAULT_RESPONSE_MODE": "everything"}, "DEFAULT_RESPONSE_MODE", 2),
        ({"KB_REPLICA_NAME": ""}, "KB_REPLICA_NAME", 2),
        (
            {"DATABASE_URL": "postgresql://x@127.0.0.1:1/none", "KB_DB_CONNECT_TIMEOUT": "1"},
            "cannot connect",
            1,
        ),
    ],
)
def test_start_up_failures_are_one_error_line(
    keyed: tuple[dict[str, str], str], env_change: dict[str, str], message: str, code: int
) -> None:
    env, _ = keyed
    proc = run_module("server", env={**env, **env_change}, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.startswith("error:") and message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_keys_cli_acts_on_the_database_and_imports_an_old_key_file(
    db: Database, tmp_path: Path
) -> None:
    old = tmp_path / "k.json"
    env = {**os.environ, "DATABASE_URL": db.conninfo, "KB_API_KEYS_FILE": str(old)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_module("server", *args, env=env, timeout=60)

    started = run()  # no key yet: the server says how to make one
    assert started.returncode == 2 and started.stderr.startswith("error: no API keys in")
    assert "keys create" in started.stderr and "Traceback" not in started.stderr
    created = run("keys", "create", "desk")
    key = created.stdout.strip()
    assert created.returncode == 0 and key.startswith("kb_")
    listed = run("keys", "list")
    assert "desk" in listed.stdout and key not in listed.stdout and "active" in listed.stdout
    assert run("keys", "create", "desk").returncode == 1  # an active key of that name exists
    assert run("keys", "revoke", "desk").returncode == 0
    assert "revoked" in run("keys", "list").stdout
    assert run("keys", "revoke", "nobody").stderr.startswith("error:")
    assert "'[bold]nobody[/]'" in run("keys", "revoke", "[bold]nobody[/]").stderr  # not markup
    # a key file of an earlier version: imported once, with a message, then renamed
    old.write_bytes(
        orjson.dumps(
            {
                "keys": [
                    {
                        "name": "laptop",
                        "key_id": digest("kb_old")[:8],
                        "digest": digest("kb_old"),
                        "created": "2026-01-02T03:04:05+00:00",
                        "revoked": False,
                    }
                ],
                "cursor_secret": "ab" * 32,
            }
        )
    )
    listed = run("keys", "list")
    assert "imported 1 API key(s)" in listed.stderr and "laptop" in listed.stdout
    assert not old.exists() and old.with_name("k.json.imported").exists()
    assert "imported" not in run("keys", "list").stderr  # once
    assert KeyStore(db).cursor_secret() == bytes.fromhex("ab" * 32)
    old.write_text("not json")
    broken = run("keys", "list")
    assert broken.returncode == 1 and "is not a key file" in broken.stderr
    assert old.read_text() == "not json"  # left as it was


def test_rate_limits_are_exact_over_http_and_one_key_cannot_exhaust_another(
    keyed: tuple[dict[str, str], str], sample_kb: Database
) -> None:
    env, busy = keyed
    quiet = KeyStore(sample_kb).create(f"quiet-{uuid.uuid4().hex[:8]}")
    limit, parallel = 20, 60
    env = {k: v for k, v in env.items() if k != "BMCIS_API_KEY"}
    proc, url = start_http(env | {"BMCIS_RATE_LIMIT_MINUTE": str(limit)})
    codes: dict[str, list[str | None]] = {"busy": [], "quiet": []}

    async def calls(key: str, who: str, n: int) -> None:
        async with (
            http_client({"X-API-Key": key}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):

            async def one() -> None:
                result = await client.call_tool("list_vendors", {"page_size": 1})
                codes[who].append((result.structured_content.get("error") or {}).get("code"))

            async with anyio.create_task_group() as tg:
                for _ in range(n):
                    tg.start_soon(one)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(3):  # three sessions of one key, all calls at once
                tg.start_soon(calls, busy, "busy", parallel // 3)
            tg.start_soon(calls, quiet, "quiet", limit // 2)

    started = time.monotonic()
    try:
        anyio.run(main)
    finally:
        stop(proc)
    # the bucket refills continuously (a token every 60 / limit s): a slow run
    # may earn one or two more, never any other excess
    refilled = int((time.monotonic() - started) * limit / 60)
    assert len(codes["busy"]) == parallel
    assert limit <= codes["busy"].count(None) <= limit + refilled, (refilled, codes["busy"])
    assert set(codes["busy"]) == {None, "RATE_LIMIT"}
    assert codes["quiet"] == [None] * (limit // 2), "another key's traffic limited this one"
    record(
        "security_rate_limit_http",
        limit_per_minute=limit,
        parallel_calls_one_key=parallel,
        allowed=codes["busy"].count(None),
        refused_rate_limit=codes["busy"].count("RATE_LIMIT"),
        other_key_calls=limit // 2,
        other_key_allowed=codes["quiet"].count(None),
    )


def test_stateless_replicas_answer_any_request_of_a_session(
    keyed: tuple[dict[str, str], str],
) -> None:
    """Behind a round-robin proxy each request may reach another replica: with
    --stateless, a client initialised on one continues on the other, cursor included."""
    import httpx2

    env, key = keyed
    env = {k: v for k, v in env.items() if k != "BMCIS_API_KEY"}
    procs = [start_http(env, None, "--stateless") for _ in range(2)]
    urls = [url for _, url in procs]
    headers = {"X-API-Key": key, "Accept": "application/json, text/event-stream"}
    try:
        with httpx2.Client(timeout=30) as http:
            init = http.post(urls[0], headers=headers, json=_INITIALIZE)
            assert init.status_code == 200 and "mcp-session-id" not in init.headers
            answers = []
            cursor = None
            for n in range(4):  # alternate replicas, as a round-robin proxy would
                args: dict[str, Any] = {"page_size": 2}
                if cursor:
                    args["cursor"] = cursor
                call = {"jsonrpc": "2.0", "id": n + 1, "method": "tools/call"}
                call["params"] = {"name": "list_vendors", "arguments": args}
                reply = http.post(urls[(n + 1) % 2], headers=headers, json=call)
                assert reply.status_code == 200, reply.text
                env_ = reply.json()["result"]["structuredContent"]
                answers.append([v["vendor_name"] for v in env_["results"]])
                cursor = env_["pagination"]["cursor"]
        sdk = _http_call(urls[1], {"X-API-Key": key}, "list_vendors", {"page_size": 2})
    finally:
        for proc, _ in procs:
            stop(proc)
    pages = [name for page in answers for name in page]
    assert len(pages) == len(set(pages)) == 8  # four pages, each continuing the last
    assert not sdk.is_error


def test_stateless_is_refused_for_stdio(keyed: tuple[dict[str, str], str]) -> None:
    env, _ = keyed
    proc = run_module("server", "--stateless", env=env, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --stateless applies")
