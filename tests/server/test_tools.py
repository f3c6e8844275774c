"""The MCP tools through a real client session, on the sample knowledge base (built by the
real rebuild) and on a small known graph.

The module is long (about 620 lines) because the tools share one built knowledge
base and one client session; each tool's happy paths sit here, its failures in
``test_fuzz.py`` and the tool's own test module.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import orjson
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from search.hybrid import ranked_hits
from server.envelope import dumps
from server.tokens import count_tokens
from sql.database import Database
from tests.fixtures.kg import mark_build
from tests.fixtures.server import Harness, error_code

pytestmark = pytest.mark.slow

QUERY = "end of support for iOS 17"


@pytest.fixture()
def sample(sample_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(sample_kb, embedder, tmp_path)


@pytest.fixture()
def roomy(sample_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    """The sample server with limits no walk reaches: the rate-limit buckets live in the
    database per key, so every example of a property test spends the same key's budget
    (one page per call, at most 100 a minute by default)."""
    many = 1_000_000
    return Harness(
        sample_kb,
        embedder,
        tmp_path,
        rate_limit_minute=many,
        rate_limit_hour=many,
        rate_limit_day=many,
    )


@pytest.fixture()
def known(graph_db: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(graph_db, embedder, tmp_path)


def test_tools_resources_and_schemas_are_published(sample: Harness) -> None:
    async def scenario(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        templates = (await client.list_resource_templates()).resource_templates
        return tools, templates

    tools, templates = sample.run(scenario)
    names = {t.name for t in tools}
    assert names == {
        "semantic_search",
        "find_vendor_info",
        "get_chunk",
        "list_vendors",
        "find_entity_path",
        "get_entity_neighbors",
        "get_lifecycle",
        "check_components",
        "get_server_metrics",
    }
    for tool in tools:
        assert tool.output_schema is not None and "_metadata" in tool.output_schema["properties"]
        assert tool.description
    search = next(t for t in tools if t.name == "semantic_search")
    props = search.input_schema["properties"]
    top_k = next(a for a in props["top_k"]["anyOf"] if a.get("type") == "integer")
    assert props["query"]["maxLength"] == 500 and top_k["maximum"] == 50
    assert {t.uri_template for t in templates} == {"vendor://{name}", "chunk://{chunk_id}"}


def _mutations(answer: Any) -> list[Any]:
    """Broken copies of ``answer``: at the first value of each path (list indices
    folded), the value made null, made a value of another type, removed from its
    object, or its object given an undeclared key."""
    out: list[Any] = []
    seen: set[tuple[str, ...]] = set()

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        shape = tuple("*" if isinstance(p, int) else p for p in path)
        if shape not in seen:
            seen.add(shape)
            other = 7 if isinstance(node, str) else "x"
            for value in (None, other):
                out.append(_replaced(answer, path, value))
            if path and isinstance(path[-1], str):
                out.append(_replaced(answer, path, _DELETE))
            if isinstance(node, dict):
                out.append(_replaced(answer, (*path, "zz_undeclared"), 1))
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))

    walk(answer, ())
    return out


_DELETE = object()


def _replaced(answer: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = orjson.loads(orjson.dumps(answer))
    node = copy
    for step in path[:-1]:
        node = node[step]
    if not path:
        return value
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


def test_published_output_schemas_mean_what_the_models_say(sample: Harness) -> None:
    """The output schemas are published in a leaner form (lean_schema) than pydantic
    writes: they must accept and refuse exactly what the models\' own schemas do, on
    real answers of every shape and on broken copies of them."""
    from jsonschema.validators import validator_for
    from pydantic import TypeAdapter

    from server.models import AnyEnvelope, SearchEnvelope, VendorEnvelope

    async def scenario(client: Client) -> Any:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        vendor = (await client.call_tool("list_vendors", {"page_size": 1})).structured_content
        assert vendor is not None
        name = vendor["results"][0]["vendor_name"]
        calls = [
            ("semantic_search", {"query": QUERY, "response_mode": "full", "top_k": 3}),
            ("semantic_search", {"query": QUERY, "response_mode": "ids_only", "page_size": 2}),
            ("find_vendor_info", {"vendor_name": name, "response_mode": "full"}),
            ("find_vendor_info", {"vendor_name": name}),
            ("find_vendor_info", {"vendor_name": "no such vendor anywhere"}),
            ("list_vendors", {"page_size": 2}),
            ("get_server_metrics", {}),
        ]
        answers = []
        for tool, args in calls:
            result = await client.call_tool(tool, args)  # the client checks the lean schema
            answers.append((tool, result.structured_content))
        return tools, answers

    tools, answers = sample.run(scenario)
    models = {"semantic_search": SearchEnvelope, "find_vendor_info": VendorEnvelope}
    originals = {name: TypeAdapter(models.get(name, AnyEnvelope)).json_schema() for name in tools}
    for name, published in tools.items():
        assert published is not None
        text = orjson.dumps(published).decode()
        assert "$ref" not in text and "$defs" not in text, name
        assert "$ref" in orjson.dumps(originals[name]).decode()  # the comparison means something
    checked = 0
    for tool, answer in answers:
        lean = validator_for(tools[tool])(tools[tool])
        full = validator_for(originals[tool])(originals[tool])
        assert lean.is_valid(answer) == full.is_valid(answer), tool
        # error answers (isError, which clients do not check) may differ in shape
        assert "error" in answer or full.is_valid(answer), tool
        for broken in _mutations(answer):
            assert lean.is_valid(broken) == full.is_valid(broken), (tool, broken)
            checked += not full.is_valid(broken)
    assert checked > 100  # many of the broken copies are refused by both


@pytest.mark.parametrize("mode", ["ids_only", "metadata", "preview", "full"])
def test_search_modes_shape_results(sample: Harness, mode: str) -> None:
    async def scenario(client: Client) -> Any:
        return await client.call_tool(
            "semantic_search", {"query": QUERY, "top_k": 5, "response_mode": mode}
        )

    result = sample.run(scenario)
    assert not result.is_error
    env = result.structured_content
    assert env["_metadata"]["status"] == "success" and env["_metadata"]["operation"] == (
        "semantic_search"
    )
    items = env["results"]
    assert 1 <= len(items) <= 5 and [i["rank"] for i in items] == list(range(1, len(items) + 1))
    assert items[0]["source_file"].startswith("vendors/Apple/") if mode != "ids_only" else True
    keys = set(items[0])
    base = {"chunk_id", "hybrid_score", "rank", "confidence", "ranking", "deduplication"}
    expected = {
        "ids_only": {"chunk_id", "hybrid_score", "rank"},  # lean: no enhancements
        "metadata": base
        | {"source_file", "source_category", "vendor", "chunk_index", "total_chunks"},
        "preview": base
        | {
            "source_file",
            "source_category",
            "vendor",
            "chunk_index",
            "total_chunks",
            "chunk_snippet",
            "context_header",
        },
    }
    if mode in expected:
        assert keys == expected[mode]
    else:
        assert {"chunk_text", "similarity_score", "bm25_score", "chunk_token_count"} <= keys
    # the text sent and the structured content are the same envelope, and its token
    # estimate is the real count of that text
    text = result.content[0].text
    assert orjson.loads(text) == env
    assert env["execution_context"]["tokens_estimated"] == count_tokens(text)


def test_desktop_enhancements_can_be_switched_off(
    sample_kb: Database, embedder: Any, tmp_path: Path
) -> None:
    plain = Harness(sample_kb, embedder, tmp_path, enable_desktop_enhancements=False)
    env = plain.call("semantic_search", query=QUERY, top_k=3)
    assert "confidence" not in env["results"][0] and "visual_hints" not in env["_metadata"]
    no_conf = Harness(sample_kb, embedder, tmp_path / "b", include_confidence_scores=False)
    env = no_conf.call("semantic_search", query=QUERY, top_k=3)
    assert "confidence" not in env["results"][0] and "ranking" in env["results"][0]


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    page_size=st.integers(min_value=1, max_value=17),
    mode=st.sampled_from(["ids_only", "metadata"]),
)
def test_walking_all_pages_yields_every_result_once(
    roomy: Harness, page_size: int, mode: str
) -> None:
    sample = roomy
    query = "support lifecycle release"

    async def scenario(client: Client) -> list[int]:
        seen: list[int] = []
        cursor = None
        for _ in range(100):
            args: dict[str, Any] = {"query": query, "page_size": page_size, "response_mode": mode}
            if cursor:
                args["cursor"] = cursor
            env = (await client.call_tool("semantic_search", args)).structured_content
            seen += [r["chunk_id"] for r in env["results"]]
            assert env["pagination"]["returned_count"] == len(env["results"])
            cursor = env["pagination"]["cursor"]
            if not env["pagination"]["has_more"]:
                assert cursor is None
                break
        return seen

    seen = sample.run(scenario)
    assert sample.service is not None
    expected = [h.chunk_id for h in ranked_hits(query, db=sample.db, embedder=sample.embedder).hits]
    assert seen == expected and len(set(seen)) == len(seen) and len(seen) > 17


def test_field_filtering(sample: Harness) -> None:
    env = sample.call("semantic_search", query=QUERY, fields=["chunk_id", "hybrid_score"])
    assert all(set(r) == {"chunk_id", "hybrid_score"} for r in env["results"])
    bad = sample.call(
        "semantic_search", query=QUERY, response_mode="ids_only", fields=["chunk_text"]
    )
    assert error_code(bad) == "INVALID_PARAMS"
    assert "Allowed: chunk_id, hybrid_score, rank" in bad["error"]["message"]


COUNTING_LAYERS = frozenset(
    {"token-fast-path", "segment-memo", "bounded-count", "fit-interpolation"}
)


@pytest.mark.parametrize("layers", [frozenset(), COUNTING_LAYERS])
def test_token_budget_degrades_to_fewer_results_and_the_cursor_continues(
    sample_kb: Database, embedder: Any, tmp_path: Path, layers: frozenset[str]
) -> None:
    """With the token-counting speed layers on, and switched back to the plain path."""
    tight = Harness(
        sample_kb, embedder, tmp_path, max_tokens_per_response=2_000, plain_paths=layers
    )

    async def scenario(client: Client) -> Any:
        first = (
            await client.call_tool(
                "semantic_search", {"query": QUERY, "top_k": 10, "response_mode": "full"}
            )
        ).structured_content
        nxt = (
            await client.call_tool(
                "semantic_search",
                {
                    "query": QUERY,
                    "top_k": 10,
                    "response_mode": "full",
                    "cursor": first["pagination"]["cursor"],
                },
            )
        ).structured_content
        return first, nxt

    first, nxt = tight.run(scenario)
    codes = [w["code"] for w in first["warnings"]]
    assert "PARTIAL_RESULTS" in codes and first["_metadata"]["status"] == "partial"
    # counted only up to the budget, the whole answer's size is an estimate
    message = first["warnings"][0]["message"]
    assert "tokens needed" in message and ("(about " in message) is not bool(layers)
    kept = len(first["results"])
    assert 0 < kept < 10 and first["pagination"]["returned_count"] == kept
    assert first["execution_context"]["tokens_estimated"] <= 2_000
    assert nxt["results"][0]["rank"] == kept + 1  # nothing skipped


def test_top_k_with_page_size_is_a_deprecated_parameter(sample: Harness) -> None:
    env = sample.call("semantic_search", query=QUERY, top_k=7, page_size=3)
    assert len(env["results"]) == 3
    assert [w["code"] for w in env["warnings"]] == ["DEPRECATED_PARAMETER"]
    plain = sample.call("semantic_search", query=QUERY, page_size=3)
    assert plain["warnings"] == []


def test_low_quality_warning_is_real(sample: Harness) -> None:
    env = sample.call("semantic_search", query="zymurgy quokka", top_k=5)
    assert [w["code"] for w in env["warnings"]] == ["LOW_QUALITY_RESULTS"]
    good = sample.call("semantic_search", query=QUERY, top_k=5)
    assert "LOW_QUALITY_RESULTS" not in [w["code"] for w in good["warnings"]]


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "says"),
    [
        ("semantic_search", {}, "INVALID_PARAMS", "query"),
        ("semantic_search", {"query": 5}, "INVALID_PARAMS", "query"),
        ("semantic_search", {"query": "x", "top_k": "5"}, "INVALID_PARAMS", "top_k"),
        ("semantic_search", {"query": "x", "top_k": 51}, "INVALID_PARAMS", "top_k"),
        ("semantic_search", {"query": "x", "top_k": 0}, "INVALID_PARAMS", "top_k"),
        ("semantic_search", {"query": "x", "top_k": True}, "INVALID_PARAMS", "top_k"),
        (
            "semantic_search",
            {"query": "x", "response_mode": "all"},
            "INVALID_PARAMS",
            "response_mode",
        ),
        ("semantic_search", {"query": "x", "extra": 1}, "INVALID_PARAMS", "'extra'"),
        ("semantic_search", {"query": ""}, "INVALID_PARAMS", "query"),
        ("semantic_search", {"query": "x" * 501}, "QUERY_TOO_LONG", "501"),
        ("semantic_search", {"query": "a\x00b"}, "INVALID_PARAMS", "NUL"),
        (
            "semantic_search",
            {"query": "x", "cursor": "forged-cursor-value"},
            "INVALID_PARAMS",
            "cursor",
        ),
        ("semantic_search", {"query": "x", "fields": "chunk_id"}, "INVALID_PARAMS", "fields"),
        ("find_vendor_info", {"vendor_name": ""}, "INVALID_PARAMS", "vendor_name"),
        ("find_vendor_info", {"vendor_name": "x" * 201}, "INVALID_PARAMS", "vendor_name"),
        ("find_vendor_info", {"vendor_name": "Acme\x07"}, "INVALID_PARAMS", "U+0007"),
        ("find_vendor_info", {"vendor_name": "?!"}, "INVALID_PARAMS", "letters or digits"),
        ("find_vendor_info", {"vendor_name": "Zzyzx Qwv"}, "VENDOR_NOT_FOUND", "not found"),
        ("get_chunk", {"chunk_id": 999999999}, "INVALID_PARAMS", "No chunk has id"),
        ("get_chunk", {"chunk_id": -1}, "INVALID_PARAMS", "chunk_id"),
        ("get_chunk", {"chunk_id": "12"}, "INVALID_PARAMS", "chunk_id"),
        ("list_vendors", {"page_size": 1000}, "INVALID_PARAMS", "page_size"),
        (
            "find_entity_path",
            {"vendor_name": "Microsoft", "from_entity": "Microsoft", "to_entity": "Nobody At All"},
            "INVALID_PARAMS",
            "No entity",
        ),
        (
            "get_entity_neighbors",
            {"vendor_name": "Microsoft", "entity": "Microsoft", "depth": 9},
            "INVALID_PARAMS",
            "depth",
        ),
    ],
)
def test_bad_input_gets_a_specific_error(
    sample: Harness, tool: str, arguments: dict[str, Any], code: str, says: str
) -> None:
    env = sample.call(tool, **arguments)
    assert env["_is_error"] is True and error_code(env) == code, env
    assert says in env["error"]["message"], env["error"]["message"]
    assert env["error"]["action"] and env["_metadata"]["status"] == "error"


def test_find_vendor_info_modes(known: Harness) -> None:
    meta = known.call("find_vendor_info", vendor_name="acme corporation")
    assert meta["results"]["vendor_name"] == "Acme Corp"
    stats = meta["results"]["statistics"]
    assert stats["entity_count"] == 7 and stats["relationship_count"] == 6
    assert meta["results"]["top_entities"][0]["name"] == "Acme Corp"
    ids = known.call("find_vendor_info", vendor_name="Acme Corp", response_mode="ids_only")
    assert len(ids["results"]["entity_ids"]) == 7 and len(ids["results"]["relationship_ids"]) == 6
    preview = known.call("find_vendor_info", vendor_name="Acme Corp", response_mode="preview")
    assert len(preview["results"]["entities"]) == 5
    assert len(preview["results"]["relationships"]) == 5
    # every relationship names its ends, also one whose other end is not among the five
    listed = {e["entity_id"]: e["name"] for e in preview["results"]["entities"]}
    whole = known.call("find_vendor_info", vendor_name="Acme Corp", response_mode="full")
    named = {e["entity_id"]: e["name"] for e in whole["results"]["entities"]}
    for r in preview["results"]["relationships"]:
        assert r["source_name"] == named[r["source_id"]]
        assert r["target_name"] == named[r["target_id"]]
    assert any(
        r["source_id"] not in listed or r["target_id"] not in listed
        for r in preview["results"]["relationships"]
    )
    full = known.call(
        "find_vendor_info",
        vendor_name="Acme Corp",
        response_mode="full",
        include_relationships=False,
    )
    assert len(full["results"]["entities"]) == 7 and "relationships" not in full["results"]
    assert full["results"]["entities"][0]["snippet"] == "about Acme Corp"
    amb = known.call("find_vendor_info", vendor_name="Apache")
    assert error_code(amb) == "VENDOR_AMBIGUOUS"
    assert set(amb["error"]["details"]["suggestions"]) == {
        "Apache Friends",
        "Apache Software Foundation",
    }


def test_graph_tools(known: Harness) -> None:
    path = known.call(
        "find_entity_path", vendor_name="Acme Corp", from_entity="Wile E. Coyote", to_entity="Mesa"
    )
    steps = path["results"]["path"]
    assert [s["name"] for s in steps] == ["Wile E. Coyote", "Acme Corp", "Mesa"]
    assert steps[0]["relationship_to_next"] == "WORKS_FOR" and steps[0]["direction"] == "forward"
    hood = known.call("get_entity_neighbors", vendor_name="Acme Corp", entity="Roadrunner 3000")
    assert {n["name"] for n in hood["results"]["neighbors"]} == {"Acme Corp", "Rocket Sled"}
    vendors = known.call("list_vendors", page_size=3)
    assert vendors["pagination"]["total_available"] == 7 and vendors["pagination"]["has_more"]


def test_auth_errors(sample_kb: Database, embedder: Any, tmp_path: Path) -> None:
    h = Harness(sample_kb, embedder, tmp_path)
    h.settings = h.settings.model_copy(update={"api_key": None})
    missing = h.call("list_vendors")
    assert error_code(missing) == "AUTH_REQUIRED" and "BMCIS_API_KEY" in missing["error"]["message"]
    from pydantic import SecretStr

    h.settings = h.settings.model_copy(update={"api_key": SecretStr("kb_wrong")})
    wrong = h.call("list_vendors")
    assert error_code(wrong) == "AUTH_INVALID"
    assert "kb_wrong" not in dumps(wrong)


def test_rate_limit_error_body(sample_kb: Database, embedder: Any, tmp_path: Path) -> None:
    h = Harness(sample_kb, embedder, tmp_path, rate_limit_minute=3)

    async def scenario(client: Client) -> list[dict[str, Any]]:
        return [(await client.call_tool("list_vendors", {})).structured_content for _ in range(4)]

    envs = h.run(scenario)
    assert [error_code(e) for e in envs] == [None, None, None, "RATE_LIMIT"]
    details = envs[3]["error"]["details"]
    assert details["remaining"]["minute"] == 0 and details["remaining"]["hour"] == 997
    assert 1 <= details["reset_in_seconds"] <= 20


def test_cache_hits_and_a_new_build_invalidates_answers_and_cursors(
    known: Harness, graph_db: Database
) -> None:
    async def scenario(client: Client) -> Any:
        a = await client.call_tool("find_vendor_info", {"vendor_name": "Acme Corp"})
        b = await client.call_tool("find_vendor_info", {"vendor_name": "acme corp"})
        page = (await client.call_tool("list_vendors", {"page_size": 2})).structured_content
        with psycopg.connect(graph_db.conninfo) as conn:
            conn.execute("DELETE FROM relationships WHERE type = 'MENTIONED_WITH'")
            mark_build(conn)
            newest = conn.execute("SELECT max(id) FROM graph_builds").fetchone()
        # the server learns of the build from its notification, a moment after the commit
        assert known.service is not None and known.service.builds is not None
        assert known.service.builds.wait_for(newest[0], timeout=10)
        c = await client.call_tool("find_vendor_info", {"vendor_name": "Acme Corp"})
        stale = (
            await client.call_tool(
                "list_vendors", {"page_size": 2, "cursor": page["pagination"]["cursor"]}
            )
        ).structured_content
        metrics = (await client.call_tool("get_server_metrics", {})).structured_content
        return a, b, c, stale, metrics

    a, b, c, stale, metrics = known.run(scenario)
    assert a.structured_content["execution_context"]["cache_hit"] is False
    assert b.structured_content["execution_context"]["cache_hit"] is True
    assert c.structured_content["execution_context"]["cache_hit"] is False
    assert c.structured_content["results"]["statistics"]["relationship_count"] == 5
    assert error_code(stale) == "INVALID_PARAMS" and "stale" in stale["error"]["message"]
    tools = metrics["results"]["tools"]
    assert tools["find_vendor_info"]["calls"] == 3
    assert tools["find_vendor_info"]["cache_hit_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert tools["list_vendors"]["errors"] == {"INVALID_PARAMS": 1}
    assert metrics["results"]["caches"]["vendor"]["hits"] == 1


def test_a_cached_answer_needs_no_database_connection_while_other_calls_run(
    known: Harness,
) -> None:
    """Under concurrency every call goes to a worker thread in turn; a cached answer is
    still looked up before anything else, so it does not wait for a connection behind
    calls that hold or await the pool (under load, cached vendor answers had waited
    200 ms there). Here every connection of the pool is held while a metrics call
    waits for one: the cached vendor answer still comes at once."""
    args = {"vendor_name": "Acme Corp", "response_mode": "metadata"}

    async def scenario(client: Client) -> Any:
        first = await client.call_tool("find_vendor_info", args)
        service = known.service
        assert service is not None and service.builds is not None
        assert service.builds.wait_for(service.kg.build_id(), timeout=10)
        held = [service.pool.getconn() for _ in range(service.pool.max_size)]
        waiting: dict[str, Any] = {}
        try:
            async with anyio.create_task_group() as tasks:

                async def metrics() -> None:
                    waiting["answer"] = await client.call_tool("get_server_metrics", {})

                tasks.start_soon(metrics)
                await anyio.sleep(0.5)  # the metrics call now waits for a connection
                assert "answer" not in waiting
                start = time.perf_counter()
                hit = await client.call_tool("find_vendor_info", args)
                elapsed = time.perf_counter() - start
                for conn in held:
                    service.pool.putconn(conn)
                held = []
        finally:
            for conn in held:
                service.pool.putconn(conn)
        return first, hit, elapsed, waiting["answer"]

    first, hit, elapsed, metrics = known.run(scenario)
    assert first.structured_content["execution_context"]["cache_hit"] is False
    assert not hit.is_error and hit.structured_content["execution_context"]["cache_hit"] is True
    assert hit.structured_content["results"] == first.structured_content["results"]
    assert elapsed < 2.0, elapsed  # the pool's own timeout is 10 s
    assert not metrics.is_error and metrics.structured_content["results"]["database"] == "ok"


def test_database_outage_is_db_connection_and_the_server_recovers(
    known: Harness, graph_db: Database, pg_admin: str
) -> None:
    name = psycopg.conninfo.conninfo_to_dict(graph_db.conninfo)["dbname"]

    def set_allowed(allowed: bool) -> None:
        with psycopg.connect(pg_admin, autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS {}").format(
                    psycopg.sql.Identifier(name), psycopg.sql.SQL("true" if allowed else "false")
                )
            )
            if not allowed:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    (name,),
                )

    async def scenario(client: Client) -> list[Any]:
        out = [(await client.call_tool("find_vendor_info", {"vendor_name": "Globex"}))]
        set_allowed(False)
        try:
            out.append(
                await client.call_tool(
                    "find_vendor_info", {"vendor_name": "Acme Corp", "response_mode": "full"}
                )
            )
            out.append(await client.call_tool("semantic_search", {"query": "rocket sled"}))
        finally:
            set_allowed(True)
        restored = time.monotonic()
        for _ in range(40):  # the first call after the outage may still meet a dead socket
            back = await client.call_tool(
                "find_vendor_info", {"vendor_name": "Acme Corp", "response_mode": "full"}
            )
            if not back.is_error:
                break
            await anyio.sleep(0.25)
        out.append(back)
        out.append(time.monotonic() - restored)
        return out

    ok, down, down_search, back, recovery_s = known.run(scenario)
    assert recovery_s <= 5.0, f"full service returned {recovery_s:.1f} s after the database"
    assert not ok.is_error
    assert error_code(down.structured_content) == "DB_CONNECTION"
    assert error_code(down_search.structured_content) == "DB_CONNECTION"
    assert "Traceback" not in dumps(down.structured_content)
    assert not back.is_error and back.structured_content["results"]["vendor_name"] == "Acme Corp"


def test_get_chunk_and_resources(sample: Harness) -> None:
    async def scenario(client: Client) -> Any:
        hit = (
            await client.call_tool(
                "semantic_search", {"query": QUERY, "top_k": 1, "response_mode": "ids_only"}
            )
        ).structured_content["results"][0]
        chunk = await client.call_tool("get_chunk", {"chunk_id": hit["chunk_id"]})
        again = await client.call_tool("get_chunk", {"chunk_id": hit["chunk_id"]})
        res = await client.read_resource("vendor://microsoft corp")
        chunk_res = await client.read_resource(f"chunk://{hit['chunk_id']}")
        return hit, chunk, again, res, chunk_res

    hit, chunk, again, res, chunk_res = sample.run(scenario)
    assert again.structured_content["execution_context"]["cache_hit"] is True
    assert again.structured_content["results"] == chunk.structured_content["results"]
    item = chunk.structured_content["results"][0]
    # the best hit is a release list (the sample notes' iOS or iPhone cycles)
    assert item["chunk_id"] == hit["chunk_id"] and "Releases" in item["chunk_text"]
    assert item["chunk_token_count"] > 0
    vendor = orjson.loads(res.contents[0].text)
    assert vendor["results"]["vendor_name"] == "Microsoft"
    assert orjson.loads(chunk_res.contents[0].text)["results"][0]["chunk_id"] == hit["chunk_id"]
