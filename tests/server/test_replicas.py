"""Three ``python -m server`` processes over HTTP on one database share keys,
revocation, cursors and rate limits, and all follow a rebuild."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from extraction.rebuild.pipeline import Rebuilder
from server.auth import KeyStore
from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.reliability import record
from tests.fixtures.search import write_notes
from tests.fixtures.server import mcp_session, start_http, stop

pytestmark = pytest.mark.slow

REPLICAS = 3
MINUTE_LIMIT = 100


def _code(result: Any) -> str | None:
    return (result.structured_content.get("error") or {}).get("code")


@pytest.fixture()
def replicas(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path
) -> Iterator[tuple[list[str], Path, dict[str, str]]]:
    """Three HTTP servers on a knowledge base of their own; their URLs, the notes
    folder and the environment they run in. No key exists when they start."""
    notes = write_notes(tmp_path / "notes")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(notes)
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"} | {
        "DATABASE_URL": db.conninfo,
        "KB_API_KEYS_FILE": str(tmp_path / "keys.json"),  # none
        "LOG_LEVEL": "WARNING",
        "BMCIS_RATE_LIMIT_MINUTE": str(MINUTE_LIMIT),
    }
    KeyStore(db).create("bootstrap")  # a server refuses to start with no key at all
    procs: list[subprocess.Popen[bytes]] = []
    try:
        urls = []
        for _ in range(REPLICAS):
            proc, url = start_http(env)
            procs.append(proc)
            urls.append(url)
        yield urls, notes, env
    finally:
        for proc in procs:
            log = stop(proc)
            assert "Traceback" not in log, log


def test_rate_limits_are_shared_exactly_by_three_replicas(
    replicas: tuple[list[str], Path, dict[str, str]], db: Database
) -> None:
    urls, _, _ = replicas
    key = KeyStore(db).create("spread")  # made after the servers started
    codes: list[str | None] = []
    window: list[float] = []

    async def main() -> None:
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(mcp_session(u, key)) for u in urls]

            async def one(client: Client) -> None:
                result = await client.call_tool("list_vendors", {"page_size": 1})
                codes.append(_code(result))

            window.append(time.monotonic())
            async with anyio.create_task_group() as tg:
                for i in range(150):  # 50 per replica, all at once
                    tg.start_soon(one, clients[i % REPLICAS])
            window.append(time.monotonic())

    anyio.run(main)
    # the bucket refills continuously (a token every 0.6 s): a slow run may earn
    # one or two more, never any other excess
    refilled = int((window[1] - window[0]) * MINUTE_LIMIT / 60)
    allowed = codes.count(None)
    assert len(codes) == 150 and set(codes) <= {None, "RATE_LIMIT"}
    assert MINUTE_LIMIT <= allowed <= MINUTE_LIMIT + refilled, (allowed, refilled)
    record(
        "replicas_rate_limit",
        replicas=REPLICAS,
        calls=150,
        minute_limit=MINUTE_LIMIT,
        allowed=allowed,
        refused_rate_limit=codes.count("RATE_LIMIT"),
        seconds=round(window[1] - window[0], 3),
    )


def test_cursors_keys_and_rebuilds_are_shared_by_every_replica(
    replicas: tuple[list[str], Path, dict[str, str]],
    db: Database,
    embedder: Any,
    extractor: Any,
) -> None:
    urls, notes, env = replicas
    key = KeyStore(db).create("shared")  # made after the servers started

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(mcp_session(u, key)) for u in urls]
            # a cursor issued by one replica continues on each of the others
            first = (
                await clients[0].call_tool("list_vendors", {"page_size": 2})
            ).structured_content
            cursor = first["pagination"]["cursor"]
            assert cursor and first["pagination"]["has_more"]
            pages = []
            for client in clients:
                page = await client.call_tool("list_vendors", {"page_size": 2, "cursor": cursor})
                assert not page.is_error, page.structured_content
                pages.append([v["vendor_name"] for v in page.structured_content["results"]])
            out["pages"] = pages
            out["first"] = [v["vendor_name"] for v in first["results"]]

            # revoked through the CLI while every replica holds an open session with it
            revoked = run_module("server", "keys", "revoke", "shared", env=env, timeout=120)
            assert revoked.returncode == 0, revoked.stderr
            done = time.monotonic()
            refused = [_code(await c.call_tool("list_vendors", {})) for c in clients]
            out["refused_after_s"] = time.monotonic() - done
            out["refused_old_sessions"] = refused
        fresh = []
        for url in urls:
            async with mcp_session(url, key) as client:
                fresh.append(_code(await client.call_tool("list_vendors", {})))
        out["refused_new_sessions"] = fresh
        return out

    out = anyio.run(main)
    assert out["pages"][0] == out["pages"][1] == out["pages"][2]
    assert out["pages"][0] and not set(out["pages"][0]) & set(out["first"])
    assert out["refused_old_sessions"] == ["AUTH_INVALID"] * REPLICAS
    assert out["refused_new_sessions"] == ["AUTH_INVALID"] * REPLICAS
    assert out["refused_after_s"] < 1.0

    # a rebuild lands: every replica answers from the new build within a second
    other = KeyStore(db).create("after-rebuild")

    async def builds() -> list[int]:
        seen = []
        for url in urls:
            async with mcp_session(url, other) as client:
                env_ = (await client.call_tool("list_vendors", {})).structured_content
                seen.append(env_["execution_context"]["graph_build_id"])
        return seen

    before = anyio.run(builds)
    (notes / "vendors" / "Initech" / "tps.md").parent.mkdir(parents=True, exist_ok=True)
    (notes / "vendors" / "Initech" / "tps.md").write_text(
        "# TPS\n\nInitech is headquartered in Austin, Texas.\n", encoding="utf-8"
    )
    Rebuilder(db, embedder=embedder, extractor=extractor).run(notes)
    landed = time.monotonic()
    deadline = landed + 5.0
    after = anyio.run(builds)
    while len(set(after)) != 1 or after[0] <= max(before):
        assert time.monotonic() < deadline, (before, after)
        time.sleep(0.05)
        after = anyio.run(builds)
    followed_s = time.monotonic() - landed
    assert len(set(before)) == 1 and after[0] > before[0]
    assert followed_s < 1.5  # three fresh sessions included
    record(
        "replicas_shared_state",
        replicas=REPLICAS,
        cursor_continued_on_every_replica=True,
        revoked_refused_by_all_after_s=round(out["refused_after_s"], 3),
        new_key_accepted_without_restart=True,
        all_on_new_build_after_s=round(followed_s, 3),
    )


def test_every_replica_names_all_live_replicas_with_their_own_metrics(
    replicas: tuple[list[str], Path, dict[str, str]], db: Database
) -> None:
    urls, _, _ = replicas
    key = KeyStore(db).create("metrics")

    async def main() -> list[dict[str, Any]]:
        answers = []
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(mcp_session(u, key)) for u in urls]
            for n, client in enumerate(clients):  # 1, 2 and 3 calls
                for _ in range(n + 1):
                    await client.call_tool("list_vendors", {"page_size": 1})
            for client in clients:
                env = (await client.call_tool("get_server_metrics", {})).structured_content
                answers.append(env["results"])
        return answers

    answers = anyio.run(main)
    names = [a["replica"] for a in answers]
    assert len(set(names)) == REPLICAS
    for own, answer in zip(names, answers, strict=True):
        listed = {r["name"]: r for r in answer["replicas"]}
        assert set(listed) == set(names)  # each sees them all, named
        assert [n for n, r in listed.items() if r["self"]] == [own]
    # each replica's own counts, as reported by the last replica asked
    last = {r["name"]: r for r in answers[-1]["replicas"]}
    for n, name in enumerate(names):
        assert last[name]["tools"]["list_vendors"]["calls"] == n + 1
    assert answers[-1]["tools"]["list_vendors"]["calls"] == REPLICAS
