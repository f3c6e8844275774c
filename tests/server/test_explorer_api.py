"""The explorer's JSON API and pages over real HTTP (``python -m server`` as a process
on the sample knowledge base): routes made from the declarations, answers equal to
the MCP tools', refusals, auth and sessions, rate limits, the Host/Origin check,
security headers and local-only mode."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from server.auth import KeyStore
from server.explorer.sessions import COOKIE
from server.explorer.web import CSP
from server.registry import checked_arguments
from server.tools import TOOLS, VIEWS
from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.server import mcp_session, start_http, stop

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env(sample_kb: Database, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    keys = tmp_path_factory.mktemp("explorer-api") / "keys.json"
    return {
        **{k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"},
        "DATABASE_URL": sample_kb.conninfo,
        "KB_API_KEYS_FILE": str(keys),
        "LOG_LEVEL": "WARNING",
    }


@pytest.fixture(scope="module")
def server(env: dict[str, str], sample_kb: Database) -> Iterator[tuple[str, str]]:
    """A server with keys required; its base URL and a key."""
    key = KeyStore(sample_kb).create(f"explorer-{uuid.uuid4().hex[:8]}")
    proc, url = start_http(env)
    try:
        yield url.removesuffix("/mcp"), key
    finally:
        stop(proc)


def _get(base: str, path: str, **kwargs: Any) -> httpx2.Response:
    return httpx2.get(base + path, timeout=30, **kwargs)


def _post(base: str, path: str, **kwargs: Any) -> httpx2.Response:
    return httpx2.post(base + path, timeout=30, **kwargs)


def test_every_declared_tool_and_view_has_a_route(server: tuple[str, str]) -> None:
    base, _ = server
    listing = _get(base, "/api/tools").json()
    assert [t["name"] for t in listing["tools"]] == [t.name for t in TOOLS]
    assert [v["name"] for v in listing["explorer"]] == [v.name for v in VIEWS]
    for entry in listing["tools"]:
        declared = next(t for t in TOOLS if t.name == entry["name"])
        assert entry["route"] == f"/api/tools/{declared.name}"
        assert entry["parameters"] == declared.Arguments.model_json_schema()


def test_answers_are_the_mcp_tools_answers(server: tuple[str, str]) -> None:
    base, key = server
    calls = [
        ("find_vendor_info", {"vendor_name": "microsoft corp", "response_mode": "full"}),
        ("get_entity_neighbors", {"vendor": "Apple", "entity": "iPhone", "depth": 2}),
        ("get_lifecycle", {"vendor_name": "Apple", "response_mode": "preview"}),
        ("semantic_search", {"query": "iOS 17 end of support", "response_mode": "preview"}),
        ("list_vendors", {"page_size": 5}),
    ]

    async def over_mcp() -> list[dict[str, Any]]:
        async with mcp_session(base + "/mcp", key) as client:
            out = []
            for name, args in calls:
                result = await client.call_tool(name, args)
                out.append(dict(result.structured_content or {}))
            return out

    mcp = anyio.run(over_mcp)
    for (name, args), expected in zip(calls, mcp, strict=True):
        response = _post(base, f"/api/tools/{name}", json=args, headers={"X-API-Key": key})
        assert response.status_code == 200, response.text
        got = response.json()
        assert got["results"] == expected["results"], name
        assert got["pagination"] == expected["pagination"], name
        assert got["_metadata"]["operation"] == name


def test_query_parameters_take_the_declared_types(server: tuple[str, str]) -> None:
    base, key = server
    headers = {"Authorization": f"Bearer {key}"}
    got = _get(
        base,
        "/api/tools/get_entity_neighbors?vendor=Apple&entity=iPhone&depth=2&limit=3"
        "&relationship_types=PRODUCES&relationship_types=BASED_ON",
        headers=headers,
    )
    assert got.status_code == 200, got.text
    assert got.json()["results"]["depth"] == 2
    assert len(got.json()["results"]["neighbors"]) <= 3
    posted = _post(
        base,
        "/api/tools/get_entity_neighbors",
        json={
            "vendor": "Apple",
            "entity": "iPhone",
            "depth": 2,
            "limit": 3,
            "relationship_types": ["PRODUCES", "BASED_ON"],
        },
        headers=headers,
    ).json()
    assert posted["results"] == got.json()["results"]
    # a value that is not of the declared type is refused by the same strict check
    bad = _get(base, "/api/tools/get_entity_neighbors?vendor=Apple&entity=x&depth=two")
    assert bad.status_code == 400 and "depth" in bad.json()["error"]["message"]


@pytest.mark.parametrize(
    ("name", "body", "status", "code"),
    [
        ("find_vendor_info", {"vendor_name": "Apple", "colour": "red"}, 400, "INVALID_PARAMS"),
        ("find_vendor_info", {"vendor_name": 7}, 400, "INVALID_PARAMS"),
        ("get_entity_neighbors", {"vendor": "Apple", "entity": "iPhone", "depth": 9}, 400, None),
        ("semantic_search", {"query": "x" * 501}, 400, "QUERY_TOO_LONG"),
        ("find_vendor_info", {"vendor_name": "Zzyzx Qqq Industries"}, 404, "VENDOR_NOT_FOUND"),
        ("get_chunk", {"chunk_id": 0}, 400, "INVALID_PARAMS"),
        ("note", {"chunk_id": 1, "path": "/etc/passwd"}, 400, "INVALID_PARAMS"),
        ("note", {"source_file": "../../etc/passwd"}, 400, "INVALID_PARAMS"),
    ],
)
def test_the_api_refuses_what_the_tools_refuse(
    server: tuple[str, str], name: str, body: dict[str, Any], status: int, code: str | None
) -> None:
    base, key = server
    kind = "explorer" if name in {v.name for v in VIEWS} else "tools"
    response = _post(base, f"/api/{kind}/{name}", json=body, headers={"X-API-Key": key})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == (code or "INVALID_PARAMS")
    declared = next(t for t in (*TOOLS, *VIEWS) if t.name == name)
    checked = checked_arguments(declared.Arguments, body)
    if not hasattr(checked, "model_dump"):  # refused before running: the check's own words
        assert error["message"] == checked.message  # type: ignore[union-attr]
    assert "Traceback" not in response.text


def test_malformed_requests_get_clear_errors(server: tuple[str, str]) -> None:
    base, key = server
    headers = {"X-API-Key": key, "Content-Type": "application/json"}
    broken = _post(base, "/api/tools/list_vendors", content=b"{not json", headers=headers)
    assert broken.status_code == 400 and "not JSON" in broken.json()["error"]["message"]
    array = _post(base, "/api/tools/list_vendors", content=b"[1, 2]", headers=headers)
    assert array.status_code == 400 and "JSON list" in array.json()["error"]["message"]
    unknown = _post(base, "/api/tools/drop_tables", json={}, headers=headers)
    assert unknown.status_code == 404 and "find_vendor_info" in unknown.json()["error"]["message"]
    form = _post(
        base,
        "/api/tools/list_vendors",
        content=b"page_size=1",
        headers={"X-API-Key": key, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 400  # only JSON bodies: a cross-site form cannot post here
    huge = _post(base, "/api/tools/semantic_search", json={"query": "x" * 300_000}, headers=headers)
    assert huge.status_code == 413
    escaped = _get(base, "/static/../../../etc/passwd")
    assert escaped.status_code == 404 and "root:" not in escaped.text


def test_auth_headers_and_refusals(server: tuple[str, str]) -> None:
    base, key = server
    path = "/api/tools/list_vendors?page_size=1"
    missing = _get(base, path)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "AUTH_REQUIRED"
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = _get(base, path, headers={"Authorization": "Bearer kb_wrong"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "AUTH_INVALID"
    assert "kb_wrong" not in wrong.text
    assert _get(base, path, headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert _get(base, path, headers={"X-API-Key": key}).status_code == 200
    session = _get(base, "/api/session").json()
    assert session == {"local_only": False, "signed_in": False}


def test_a_session_cookie_holds_an_opaque_token_and_a_revoked_key_ends_it(
    server: tuple[str, str], sample_kb: Database
) -> None:
    base, _ = server
    store = KeyStore(sample_kb)
    name = f"browser-{uuid.uuid4().hex[:8]}"
    key = store.create(name)
    refused = _post(base, "/api/session", json={"api_key": "kb_not_a_key"})
    assert refused.status_code == 401 and COOKIE not in refused.headers.get("set-cookie", "")
    with httpx2.Client(base_url=base, timeout=30) as browser:
        signed = browser.post("/api/session", json={"api_key": key})
        assert signed.status_code == 200, signed.text
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie  # plain http here; set over https
        token = browser.cookies[COOKIE]
        assert key not in cookie and token not in key and len(token) >= 40
        assert browser.get("/api/session").json()["signed_in"] is True
        assert browser.get("/api/tools/list_vendors").status_code == 200
        store.revoke(name)
        after = browser.get("/api/tools/list_vendors")
        assert after.status_code == 401 and after.json()["error"]["code"] == "AUTH_INVALID"
        assert f'{COOKIE}=""' in after.headers["set-cookie"]  # the session is dropped
    # the same token cannot be replayed after its key was refused
    again = _get(base, "/api/tools/list_vendors", cookies={COOKIE: token})
    assert again.status_code == 401 and again.json()["error"]["code"] == "AUTH_REQUIRED"


def test_signing_out_ends_the_session(server: tuple[str, str]) -> None:
    base, key = server
    with httpx2.Client(base_url=base, timeout=30) as browser:
        assert browser.post("/api/session", json={"api_key": key}).status_code == 200
        token = browser.cookies[COOKIE]
        assert browser.delete("/api/session").json() == {"signed_in": False}
    assert _get(base, "/api/tools/list_vendors", cookies={COOKIE: token}).status_code == 401


def test_host_and_origin_are_checked_on_every_explorer_route(server: tuple[str, str]) -> None:
    base, key = server
    for path in ("/", "/vendor", "/static/js/common.js", "/api/tools", "/api/session"):
        rebound = _get(base, path, headers={"Host": "evil.example:8000"})
        assert rebound.status_code == 421, path
    cross = _post(
        base,
        "/api/tools/list_vendors",
        json={},
        headers={"X-API-Key": key, "Origin": "http://evil.example"},
    )
    assert cross.status_code == 403
    port = base.rsplit(":", 1)[1]
    same = _post(
        base,
        "/api/tools/list_vendors",
        json={},
        headers={"X-API-Key": key, "Origin": f"http://127.0.0.1:{port}"},
    )
    assert same.status_code == 200
    # another port of this machine is another origin
    other = _post(
        base,
        "/api/tools/list_vendors",
        json={},
        headers={"X-API-Key": key, "Origin": "http://127.0.0.1:1"},
    )
    assert other.status_code == 403


def test_every_explorer_response_carries_the_security_headers(server: tuple[str, str]) -> None:
    base, key = server
    for path in (
        "/",
        "/vendor?name=Apple",
        "/lifecycle",
        "/search",
        "/note?chunk=1",
        "/static/js/vendor.js",
        "/static/vendor/cytoscape.min.js",
        "/api/tools",
        "/api/tools/list_vendors",
    ):
        response = _get(base, path, headers={"X-API-Key": key})
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CSP
        assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
    page = _get(base, "/").text
    assert "<script>" not in page and " on" not in page.split("<body>")[1]  # no inline code
    licences = _get(base, "/static/vendor/LICENSES.txt")
    assert "Cytoscape.js 3.35.0" in licences.text and "MIT" in licences.text


def test_explorer_calls_are_counted_in_the_metrics(server: tuple[str, str]) -> None:
    base, key = server
    headers = {"X-API-Key": key}
    assert _post(base, "/api/explorer/newest_build", json={}, headers=headers).status_code == 200
    metrics = _post(base, "/api/tools/get_server_metrics", json={}, headers=headers).json()
    assert metrics["results"]["tools"]["newest_build"]["calls"] >= 1


def test_rate_limits_are_429_with_retry_after(env: dict[str, str], sample_kb: Database) -> None:
    key = KeyStore(sample_kb).create(f"limited-{uuid.uuid4().hex[:8]}")
    proc, url = start_http(env | {"BMCIS_RATE_LIMIT_MINUTE": "3"})
    base = url.removesuffix("/mcp")
    try:
        codes = [
            _get(base, "/api/explorer/newest_build", headers={"X-API-Key": key}).status_code
            for _ in range(5)
        ]
        last = _get(base, "/api/explorer/newest_build", headers={"X-API-Key": key})
    finally:
        stop(proc)
    assert codes[:3] == [200, 200, 200] and 429 in codes[3:]
    assert last.status_code == 429 and int(last.headers["retry-after"]) >= 1
    assert last.json()["error"]["details"]["remaining"]["minute"] == 0


def test_local_only_mode_binds_to_loopback_only(env: dict[str, str], tmp_path: Path) -> None:
    refused = run_module(
        "server",
        "--transport",
        "streamable-http",
        "--host",
        "0.0.0.0",
        "--local-explorer",
        env=env,
        timeout=120,
    )
    assert refused.returncode == 2 and "--local-explorer" in refused.stderr
    assert "Traceback" not in refused.stderr
    stdio = run_module("server", "--local-explorer", env=env, timeout=120)
    assert stdio.returncode == 2 and "streamable-http" in stdio.stderr
    proc, url = start_http(env, None, "--local-explorer")
    base = url.removesuffix("/mcp")
    try:
        session = _get(base, "/api/session").json()
        keyless = _get(base, "/api/tools/list_vendors?page_size=2")
        wrong = _get(base, "/api/tools/list_vendors", headers={"X-API-Key": "kb_wrong"})
    finally:
        log = stop(proc)
    assert session == {"local_only": True, "signed_in": False}
    assert keyless.status_code == 200 and len(keyless.json()["results"]) == 2
    assert wrong.status_code == 401  # a key that is sent is checked, local mode or not
    assert "local-only" in log and "/mcp" in log
