"""Each tool declared once: the published input schema, the argument check, the
aliases, ``--help`` and the generated tool reference all come from the tool's
``Arguments`` model (real MCP client sessions on the sample knowledge base)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from server import reference
from server.errors import ErrorCode, ToolFailure
from server.registry import checked_arguments
from server.tools import TOOLS
from server.tools.arguments import accepted_names
from server.tools.graph import GetEntityNeighbors
from server.tools.lifecycle import GetLifecycle
from server.tools.search import SemanticSearch
from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.server import Harness, error_code

VENDOR_TOOLS = [t for t in TOOLS if "vendor_name" in t.Arguments.model_fields]


def test_the_committed_tool_reference_is_what_the_tools_declare() -> None:
    current = reference.DOC.read_text(encoding="utf-8")
    assert reference.render() == current, "docs/tools.md is stale: run python -m server.reference"
    assert reference.main(["--check"]) == 0
    for tool in TOOLS:  # every tool and every parameter is in it
        assert f"## `{tool.name}`" in current
        for name in tool.Arguments.model_fields:
            assert f"`{name}`" in current


def test_a_stale_reference_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "tools.md"
    stale.write_text(reference.render().replace("hops (1-5)", "hops"), encoding="utf-8")
    monkeypatch.setattr(reference, "DOC", stale)
    assert reference.main(["--check"]) == 1
    assert reference.main([]) == 0 and reference.main(["--check"]) == 0


def test_one_name_per_concept_across_tools() -> None:
    """A vendor is vendor_name in every tool that takes one, and vendor is its alias."""
    assert {t.name for t in VENDOR_TOOLS} == {
        "find_vendor_info",
        "find_entity_path",
        "get_entity_neighbors",
        "get_lifecycle",
    }
    for tool in TOOLS:
        names = accepted_names(tool.Arguments)
        assert "vendor" not in tool.Arguments.model_fields, tool.name
        if "vendor_name" in tool.Arguments.model_fields:
            assert names["vendor"] == "vendor_name", tool.name


def test_the_argument_check() -> None:
    args = checked_arguments(GetLifecycle.Arguments, {"vendor": "Acme", "page_size": 5})
    assert not isinstance(args, ToolFailure)
    assert args.vendor_name == "Acme" and args.page_size == 5 and args.cursor is None
    twice = checked_arguments(GetLifecycle.Arguments, {"vendor": "A", "vendor_name": "B"})
    assert isinstance(twice, ToolFailure) and twice.code is ErrorCode.INVALID_PARAMS
    assert "given twice" in twice.message
    unknown = checked_arguments(GetEntityNeighbors.Arguments, {"vendor_name": "A", "x": 1})
    assert isinstance(unknown, ToolFailure) and "'x'" in unknown.message
    assert "entity" in unknown.message  # says what the tool takes
    neighbours = GetEntityNeighbors.Arguments
    loose = checked_arguments(neighbours, {"vendor": "A", "entity": "B", "depth": "2"})
    assert isinstance(loose, ToolFailure) and "depth" in loose.message  # strict: no coercion
    bounds = checked_arguments(neighbours, {"vendor": "A", "entity": "B", "depth": 9})
    assert isinstance(bounds, ToolFailure) and "depth" in bounds.message
    long = checked_arguments(SemanticSearch.Arguments, {"query": "x" * 501})
    assert isinstance(long, ToolFailure) and long.code is ErrorCode.QUERY_TOO_LONG
    surrogate = checked_arguments(SemanticSearch.Arguments, {"query": "a\ud800"})
    assert isinstance(surrogate, ToolFailure) and "surrogate" in surrogate.message


def test_help_lists_every_tool() -> None:
    shown = run_module("server", "--help").stdout
    for tool in TOOLS:
        assert tool.name in shown


@pytest.fixture()
def sample(sample_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(sample_kb, embedder, tmp_path)


@pytest.mark.slow
def test_published_input_schemas_are_the_declarations(sample: Harness) -> None:
    async def scenario(client: Client) -> Any:
        return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    published = sample.run(scenario)
    assert set(published) == {t.name for t in TOOLS}
    for tool in TOOLS:
        declared = tool.Arguments.model_json_schema()
        schema = published[tool.name]
        assert set(schema.get("properties", {})) == set(declared.get("properties", {}))
        assert set(schema.get("required", [])) == set(declared.get("required", []))
        for name, prop in declared.get("properties", {}).items():
            shown = schema["properties"][name]
            for key in ("description", "default", "anyOf", "maxLength", "minimum", "maximum"):
                assert shown.get(key) == prop.get(key), (tool.name, name, key)


@pytest.mark.slow
@pytest.mark.parametrize("tool", [t.name for t in VENDOR_TOOLS])
def test_every_tool_takes_vendor_for_vendor_name(sample: Harness, tool: str) -> None:
    rest: dict[str, dict[str, Any]] = {
        "find_vendor_info": {"response_mode": "metadata"},
        "find_entity_path": {"from_entity": "Atlassian", "to_entity": "Jira Software"},
        "get_entity_neighbors": {"entity": "Atlassian"},
        "get_lifecycle": {"as_of": "2026-01-15"},
    }

    async def scenario(client: Client) -> Any:
        out = []
        for vendor_arg in ({"vendor_name": "atlassian"}, {"vendor": "atlassian"}):
            result = await client.call_tool(tool, {**vendor_arg, **rest[tool]})
            out.append((result.is_error, result.structured_content))
        both = await client.call_tool(
            tool, {"vendor_name": "atlassian", "vendor": "atlassian", **rest[tool]}
        )
        out.append((both.is_error, both.structured_content))
        return out

    (err_a, by_name), (err_b, by_alias), (err_c, twice) = sample.run(scenario)
    assert err_a == err_b and error_code(by_name) == error_code(by_alias)
    assert by_name["results"] == by_alias["results"]
    assert error_code(by_name) != "INVALID_PARAMS", by_name  # the alias was understood
    assert err_c and error_code(twice) == "INVALID_PARAMS"
