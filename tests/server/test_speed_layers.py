"""Every speed layer both ways (KB_PLAIN_PATHS): every tool answers the same through a
real client session with the layers on and with all of them switched back to the plain
path, and each switch does take its plain path. The cache layers are also checked by the
pool's requests (test_builds), stdio in a real subprocess (test_transports)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from pydantic import ValidationError

from server import sdk
from server.envelope import FAST, Counting, account, dumps, envelope, fit, reused
from server.settings import SPEED_LAYERS, ServerSettings
from server.tokens import count_tokens, encoded_length
from sql.database import Database
from sql.settings import settings_problem
from tests.fixtures import REPO
from tests.fixtures.server import Harness, error_code

ALL = frozenset(SPEED_LAYERS)
QUERY = "end of support for iOS 17"
VOLATILE = {"request_id", "timestamp", "execution_time_ms", "tokens_estimated"}
NEEDED = re.compile(r"\((about )?[\d,]+ tokens needed\)")


# -- the switch ---------------------------------------------------------------------------


def test_the_switch_names_layers_and_every_layer_is_documented(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ServerSettings().plain_paths == frozenset()
    monkeypatch.setenv("KB_PLAIN_PATHS", " stdio, Cache-First ,")
    settings = ServerSettings()
    assert settings.plain_paths == {"stdio", "cache-first"}
    assert not settings.fast("stdio") and settings.fast("lean-schema")
    monkeypatch.setenv("KB_PLAIN_PATHS", "all")
    assert ServerSettings().plain_paths == ALL
    monkeypatch.setenv("KB_PLAIN_PATHS", "stdio,turbo")
    with pytest.raises(ValidationError) as bad:
        ServerSettings()
    assert "KB_PLAIN_PATHS" in settings_problem(bad.value)
    docs = (REPO / "docs" / "server.md").read_text(encoding="utf-8")
    code = "".join(p.read_text(encoding="utf-8") for p in (REPO / "server").rglob("*.py"))
    for layer in SPEED_LAYERS:
        assert f"| `{layer}` |" in docs, layer  # the table of docs/server.md
        # the docstring that gives the layer's measured reason
        assert f"layer ``{layer}``" in code or f"- ``{layer}``:" in code, layer


def test_counting_follows_the_switch() -> None:
    assert Counting.of(ServerSettings()) == FAST
    plain = Counting.of(ServerSettings(plain_paths=ALL))
    assert plain == Counting(
        count=encoded_length,
        segment_memo=False,
        bounded=False,
        interpolation=False,
        recount=False,
    )
    assert FAST.count is count_tokens


# -- every tool, both ways, through a real client session ---------------------------------


def _scenario(harness: Harness) -> list[tuple[str, dict[str, Any]]]:
    """Every tool and the paths through the frame (fresh, cached, cut to the budget,
    paged, refused, failed), answers in order."""

    async def scenario(client: Client) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []

        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, args)
            assert result.structured_content is not None
            text = [c.text for c in result.content if c.type == "text"]
            assert [orjson.loads(t) for t in text] == [result.structured_content]
            env = dict(result.structured_content)
            assert result.is_error == ("error" in env), (tool, env)
            out.append((tool, env))
            return env

        page = await call("list_vendors", {"page_size": 2})
        await call("list_vendors", {"page_size": 2, "cursor": page["pagination"]["cursor"]})
        await call("list_vendors", {"page_size": 2})  # cached
        full = {"query": QUERY, "top_k": 10, "response_mode": "full"}
        cut = await call("semantic_search", full)  # over the budget: cut
        await call("semantic_search", full)  # cached
        await call("semantic_search", full | {"cursor": cut["pagination"]["cursor"]})
        found = await call("semantic_search", {"query": QUERY, "page_size": 3})
        chunk = found["results"][0]["chunk_id"]
        await call("get_chunk", {"chunk_id": chunk})
        await call("get_chunk", {"chunk_id": chunk, "response_mode": "preview"})
        vendor = {"vendor_name": "microsoft corp", "response_mode": "full"}
        graph = await call("find_vendor_info", vendor)
        await call("find_vendor_info", vendor)  # cached
        await call("find_vendor_info", {"vendor_name": "Microsoft"})
        names = [e["name"] for e in graph["results"]["entities"][:2]]
        around = {"vendor_name": "Microsoft", "entity": names[0], "depth": 2}
        await call("get_entity_neighbors", around)
        await call("get_entity_neighbors", around)  # cached
        path = {"vendor_name": "Microsoft", "from_entity": names[0], "to_entity": names[1]}
        await call("find_entity_path", path)
        await call("find_entity_path", path)  # cached
        await call("semantic_search", {"query": "x" * 501})  # refused: QUERY_TOO_LONG
        await call("semantic_search", {"query": QUERY, "top_k": "3"})  # refused: a string
        await call("find_vendor_info", {"vendor_name": "no such vendor anywhere"})
        await call("list_vendors", {"cursor": "forged-cursor-text"})
        await call("get_server_metrics", {})
        return out

    return harness.run(scenario)  # type: ignore[no-any-return]


def _comparable(tool: str, env: dict[str, Any]) -> Any:
    """``env`` without what differs from one call to the next."""
    if tool == "get_server_metrics":
        return sorted(env["results"])

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in VOLATILE}
        if isinstance(node, list):
            return [strip(v) for v in node]
        if isinstance(node, str):
            return NEEDED.sub("(N tokens needed)", node)
        return node

    return strip(env)


def _omitted(env: dict[str, Any]) -> int | None:
    """How many items a cut answer left out (None: not cut)."""
    for w in env.get("warnings") or []:
        if w["code"] == "PARTIAL_RESULTS":
            return int(w["message"].split(" of ", 1)[0].replace(",", ""))
    return None


def _shape(env: dict[str, Any]) -> Any:
    """What a cut answer is, apart from where the cut fell."""
    results = env["results"]
    keys = sorted(results) if isinstance(results, dict) else type(results).__name__
    return env["_metadata"]["status"], [w["code"] for w in env["warnings"]], keys


def test_every_tool_answers_the_same_with_every_layer_switched_off(
    sample_kb: Database, embedder: Any, tmp_path: Path
) -> None:
    many = 1_000_000
    limits = {"rate_limit_minute": many, "rate_limit_hour": many, "rate_limit_day": many}
    fast, plain = (
        Harness(
            sample_kb,
            embedder,
            tmp_path / name,
            max_tokens_per_response=2_000,
            plain_paths=layers,
            **limits,
        )
        for name, layers in (("fast", frozenset()), ("plain", ALL))
    )
    fast_answers, plain_answers = _scenario(fast), _scenario(plain)
    for (tool, a), (_, b) in zip(fast_answers, plain_answers, strict=True):
        cut = [_omitted(env) for env in (a, b)]
        if cut[0] is not None and cut[1] is not None and cut[0] != cut[1]:
            # The plain path states the size needed exactly, the bounded count says
            # "about N": the two PARTIAL_RESULTS messages differ by a token or so, and
            # a cut that lands right at the budget can keep one item more or less.
            assert abs(cut[0] - cut[1]) == 1, (tool, cut)
            assert _shape(a) == _shape(b), tool
            continue
        assert _comparable(tool, a) == _comparable(tool, b), tool
        for env in (a, b):  # every token count is the count of the very text sent
            assert env["execution_context"]["tokens_estimated"] == count_tokens(dumps(env))
    codes = [error_code(env) for _, env in fast_answers]
    assert codes.count("QUERY_TOO_LONG") == 1 and codes.count("INVALID_PARAMS") == 2
    assert codes.count("VENDOR_NOT_FOUND") == 1
    hits = [env["execution_context"]["cache_hit"] for _, env in plain_answers]
    assert sum(hits) >= 5  # the cached calls are hits on the plain paths too
    cut = next(env for tool, env in fast_answers if env["_metadata"]["status"] == "partial")
    plain_cut = next(env for _, env in plain_answers if env["_metadata"]["status"] == "partial")
    # bounded-count: only the fast path estimates the size of what was cut
    assert "(about " in cut["warnings"][0]["message"]
    assert "(about " not in plain_cut["warnings"][0]["message"]


# -- each switch takes its plain path -----------------------------------------------------


def _spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    calls: list[int] = []
    real: Callable[..., Any] = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


CALLS = [
    ("find_vendor_info", {"vendor_name": "Acme Corp", "response_mode": "full"}),
    ("list_vendors", {"page_size": 2}),
    ("get_entity_neighbors", {"vendor_name": "Acme Corp", "entity": "Roadrunner 3000"}),
    (
        "find_entity_path",
        {"vendor_name": "Acme Corp", "from_entity": "Mesa", "to_entity": "Globex"},
    ),
    ("get_server_metrics", {}),
]


@pytest.mark.parametrize(
    "layers", [frozenset(), frozenset({"skip-sdk-checks"}), frozenset({"wire-result"})]
)
def test_the_call_path_layers_switched_off_take_the_sdks_path(
    graph_db: Database,
    embedder: Any,
    tmp_path: Path,
    layers: frozenset[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """skip-sdk-checks off: the SDK validates the arguments again and checks the
    answer; wire-result off: results reach the SDK as CallToolResult, not in wire form.
    Each tool is called twice: the second time from the cache, on the event loop
    (get_server_metrics is never cached)."""
    harness = Harness(graph_db, embedder, tmp_path, plain_paths=layers)
    validated = _spy(monkeypatch, FuncMetadata, "validate_arguments")
    converted = _spy(monkeypatch, FuncMetadata, "convert_result")
    wired = _spy(monkeypatch, sdk, "wire_result")

    async def scenario(client: Client) -> list[Any]:
        return [await client.call_tool(tool, args) for tool, args in CALLS * 2]

    results = harness.run(scenario)
    assert not any(r.is_error for r in results)
    first, again = results[: len(CALLS)], results[len(CALLS) :]
    assert [r.structured_content["execution_context"]["cache_hit"] for r in again] == [
        True,
        True,
        True,
        True,
        False,
    ]
    for a, b in zip(first[:-1], again, strict=False):
        assert a.structured_content["results"] == b.structured_content["results"]
    through_sdk = len(CALLS) + 1 if "skip-sdk-checks" in layers else 0
    assert len(validated) == len(converted) == through_sdk
    if "wire-result" in layers:
        assert wired == []
    else:  # all but what went through the SDK, which needs a CallToolResult to check
        assert len(wired) == 2 * len(CALLS) - through_sdk


@pytest.mark.parametrize("layers", [frozenset(), frozenset({"lean-schema"})])
def test_lean_schema_switched_off_publishes_the_sdks_schemas(
    graph_db: Database,
    embedder: Any,
    tmp_path: Path,
    layers: frozenset[str],
) -> None:
    harness = Harness(graph_db, embedder, tmp_path, plain_paths=layers)

    async def scenario(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        # the client checks each answer against the published schema
        answers = [await client.call_tool(tool, args) for tool, args in CALLS]
        return tools, answers

    tools, answers = harness.run(scenario)
    assert not any(a.is_error for a in answers)
    for tool in tools:
        text = orjson.dumps(tool.output_schema).decode()
        assert ('"$ref"' in text) is bool(layers), tool.name


# -- the budget fit: each counting layer off gives the same answer ------------------------


def _envelopes(n: int) -> Callable[[int], dict[str, Any]]:
    items = [{"chunk_id": i, "chunk_text": f"word {i} " * (40 + i % 7)} for i in range(n)]
    return lambda k: envelope("t", "req_1", items[:k], elapsed_ms=1.0)


class _Tally:
    """A token counter that keeps account of the characters it was given."""

    def __init__(self) -> None:
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.chars += len(text)
        return count_tokens(text)


@pytest.mark.parametrize("layer", ["segment-memo", "bounded-count", "fit-interpolation"])
def test_each_budget_layer_switched_off_keeps_the_answer_and_does_more_work(layer: str) -> None:
    build = _envelopes(60)
    work: dict[str, int] = {}
    kept: dict[str, Any] = {}
    built: dict[str, int] = {}
    for name, layers in (("fast", frozenset()), ("plain", frozenset({layer}))):
        tally = _Tally()
        calls = [0]

        def counted_build(k: int, calls: list[int] = calls) -> dict[str, Any]:
            calls[0] += 1
            return build(k)

        counting = Counting.of(ServerSettings(plain_paths=layers))
        counting = Counting(
            count=tally,
            segment_memo=counting.segment_memo,
            bounded=counting.bounded,
            interpolation=counting.interpolation,
        )
        env, n = fit(counted_build, 60, budget=3_000, threshold=0.8, counting=counting)
        assert account(env) == env["execution_context"]["tokens_estimated"] <= 3_000
        kept[name] = (n, env["results"], [w["code"] for w in env["warnings"]])
        work[name], built[name] = tally.chars, calls[0]
    assert kept["fast"] == kept["plain"]
    if layer == "fit-interpolation":
        assert built["plain"] > built["fast"]  # more lengths tried
    else:
        assert work["plain"] > work["fast"]  # more text tokenised


def test_cache_recount_switched_off_counts_the_reused_answer_whole() -> None:
    env = _envelopes(5)(5)
    account(env)
    tally = _Tally()
    for counting in (Counting(count=tally), Counting(count=tally, recount=False)):
        before = tally.chars
        again = reused(env, "req_2", elapsed_ms=12.5, counting=counting)
        assert again["execution_context"]["tokens_estimated"] == count_tokens(dumps(again))
        if counting.recount:
            assert tally.chars - before < 100  # the changed values only
        else:
            assert tally.chars - before >= len(dumps(again))
