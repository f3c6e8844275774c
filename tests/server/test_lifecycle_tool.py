"""``get_lifecycle`` and find_vendor_info's lifecycle summary through a real MCP client
session, on the sample knowledge base (real PostgreSQL, real models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from kg import KnowledgeGraph
from kg.lifecycle import cycle_dict
from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.server import Harness, error_code

AS_OF = "2026-01-15"


@pytest.fixture()
def sample(sample_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(sample_kb, embedder, tmp_path)


def test_a_vendors_cycles_in_every_mode(sample: Harness) -> None:
    meta = sample.call("get_lifecycle", vendor="atlassian", as_of=AS_OF)
    assert meta["_is_error"] is False, meta
    results = meta["results"]
    assert results["vendor"] == "Atlassian" and results["as_of"] == AS_OF
    assert {p["product"] for p in results["products"]} == {"Confluence", "Jira Software"}
    jira = next(
        c for c in results["cycles"] if c["product"] == "Jira Software" and c["cycle"] == "10.2"
    )
    assert jira == {
        "product": "Jira Software",
        "cycle": "10.2",
        "status": "supported",
        "released": True,
        "release_date": "2024-11-20",
        "support_ends": "2026-11-20",
        "days_to_next_change": 309,
    }
    ids = sample.call("get_lifecycle", vendor="Atlassian", as_of=AS_OF, response_mode="ids_only")
    assert set(ids["results"]["cycles"][0]) == {"product", "cycle"}
    preview = sample.call("get_lifecycle", vendor="Atlassian", as_of=AS_OF, response_mode="preview")
    assert "next_change" in preview["results"]["cycles"][0]
    full = sample.call("get_lifecycle", vendor="Atlassian", as_of=AS_OF, response_mode="full")
    assert "extra" in full["results"]["cycles"][0] and "link" in full["results"]["cycles"][0]
    total = meta["pagination"]["total_available"]
    assert total == len(full["results"]["cycles"]) + 0 or full["pagination"]["has_more"]


def test_a_product_and_version_and_the_cross_vendor_risk_list(sample: Harness) -> None:
    one = sample.call("get_lifecycle", product="python", version="3.12.1", as_of=AS_OF)
    assert one["results"]["version"] == {
        "version": "3.12.1",
        "cycle": "3.12",
        "cycle_latest": "3.12.14",
        "is_latest": False,
    }
    named = sample.call("get_lifecycle", product="Python 3.12", as_of=AS_OF)
    assert named["results"]["version"]["cycle"] == "3.12"
    risk = sample.call("get_lifecycle", within_days=365, as_of=AS_OF, response_mode="preview")
    events = risk["results"]["events"]
    assert events and [e["date"] for e in events] == sorted(e["date"] for e in events)
    assert risk["results"]["until"] == "2027-01-15"
    mine = sample.call("get_lifecycle", vendor="Atlassian", within_days=365, as_of=AS_OF)
    assert {e["vendor"] for e in mine["results"]["events"]} == {"Atlassian"}


def test_pages_walk_every_cycle_once_and_answers_are_cached(sample: Harness) -> None:
    seen: list[tuple[str, str]] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"vendor": "Microsoft", "as_of": AS_OF, "page_size": 7}
        if cursor:
            args["cursor"] = cursor
        page = sample.call("get_lifecycle", **args)
        seen += [(c["product"], c["cycle"]) for c in page["results"]["cycles"]]
        cursor = page["pagination"]["cursor"]
        if not page["pagination"]["has_more"]:
            break
    assert len(seen) == len(set(seen)) == page["pagination"]["total_available"]

    async def twice(client: Client) -> Any:
        args = {"vendor": "microsoft", "as_of": AS_OF, "page_size": 7}
        first = await client.call_tool("get_lifecycle", args)
        second = await client.call_tool("get_lifecycle", {**args, "vendor": " Microsoft"})
        return first.structured_content, second.structured_content

    first, second = sample.run(twice)
    assert first["execution_context"]["cache_hit"] is False
    assert second["execution_context"]["cache_hit"] is True
    assert second["results"] == first["results"]


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        ({"vendor": "Atlassian", "product": "Bamboo"}, "PRODUCT_NOT_FOUND", "No product 'Bamboo'"),
        ({"vendor": "Initech"}, "VENDOR_NOT_FOUND", "Initech"),
        ({"product": "python", "version": "9.9"}, "INVALID_PARAMS", "belongs to no release"),
        ({"vendor": "Atlassian", "as_of": "2024-13-01"}, "INVALID_PARAMS", "is not a date"),
        ({"vendor": "Atlassian", "as_of": "2024"}, "INVALID_PARAMS", "is not a date"),
        ({"vendor": "Atlassian", "as_of": 20240101}, "INVALID_PARAMS", "as_of"),
        ({"within_days": 0}, "INVALID_PARAMS", "within_days"),
        ({"within_days": -1}, "INVALID_PARAMS", "within_days"),
        ({"within_days": 100_000}, "INVALID_PARAMS", "within_days"),
        ({}, "INVALID_PARAMS", "Give a vendor, a product, or within_days"),
        ({"within_days": 30, "product": "python"}, "INVALID_PARAMS", "leave product"),
        ({"vendor": "Atlassian", "cursor": "not-a-cursor"}, "INVALID_PARAMS", "cursor"),
    ],
)
def test_bad_input_gets_a_specific_error(
    sample: Harness, arguments: dict[str, Any], code: str, says: str
) -> None:
    env = sample.call("get_lifecycle", **arguments)
    assert env["_is_error"] is True and error_code(env) == code, env
    assert says in env["error"]["message"], env["error"]["message"]


def test_an_ambiguous_product_lists_the_candidates(sample: Harness) -> None:
    env = sample.call("get_lifecycle", product="apple")
    assert error_code(env) in ("PRODUCT_AMBIGUOUS", "PRODUCT_NOT_FOUND"), env
    assert env["error"]["details"]["suggestions"]


def test_find_vendor_info_carries_a_lifecycle_summary_sized_per_mode(sample: Harness) -> None:
    meta = sample.call("find_vendor_info", vendor_name="Atlassian")
    summary = meta["results"]["lifecycle"]
    assert summary["product_count"] == 2 and summary["cycle_count"] > 0
    assert sum(summary["by_status"].values()) <= summary["cycle_count"]
    assert "products" not in summary  # counts only in metadata mode
    preview = sample.call("find_vendor_info", vendor_name="Atlassian", response_mode="preview")
    products = preview["results"]["lifecycle"]["products"]
    assert {p["product"] for p in products} == {"Confluence", "Jira Software"}
    assert all("current_cycles" in p for p in products)
    full = sample.call("find_vendor_info", vendor_name="Atlassian", response_mode="full")
    cycles = sum(len(p["cycles"]) for p in full["results"]["lifecycle"]["products"])
    assert cycles == summary["cycle_count"]
    assert full["results"]["lifecycle"]["cycles_left_out"] == 0


def test_the_cli_and_the_tool_agree_on_every_product(sample: Harness, sample_kb: Database) -> None:
    """Every product of the knowledge base, through ``python -m kg lifecycle --json``
    and through ``get_lifecycle`` in full mode: the same cycles with the same status."""
    kg = KnowledgeGraph(sample_kb)
    products = {
        (p.product.vendor, p.product.product)
        for v in (
            "Atlassian",
            "Microsoft",
            "Linux Foundation",
            "_unattributed",
            "Apple",
            "HashiCorp",
            "JetBrains",
            "Mozilla",
            "Anthropic",
        )
        for p in kg.lifecycle(v).products
    }
    assert len(products) >= 10
    for vendor, product in sorted(products):
        proc = run_module(
            "kg",
            "lifecycle",
            vendor,
            product,
            "--as-of",
            AS_OF,
            "--json",
            db=sample_kb,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        cli = orjson.loads(proc.stdout)["products"][0]["cycles"]
        tool = sample.call(
            "get_lifecycle",
            vendor=vendor,
            product=product,
            as_of=AS_OF,
            response_mode="full",
            page_size=500,
        )
        assert tool["_is_error"] is False, tool
        from_tool = [
            {k: v for k, v in c.items() if k != "product"} for c in tool["results"]["cycles"]
        ]
        assert from_tool == cli, (vendor, product)
    assert cycle_dict  # the one serializer both use


def test_a_cached_vendor_answer_is_not_served_the_next_day(
    sample: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """find_vendor_info's lifecycle summary is as of today: the answer cached today
    is served again today, and tomorrow's call makes tomorrow's answer."""
    import datetime as dt

    import kg.support

    today = dt.date(2026, 3, 31)
    monkeypatch.setattr(kg.support, "current_date", lambda: today)

    async def scenario(client: Client) -> list[dict[str, Any]]:
        nonlocal today
        answers = []
        for day in (today, today, today + dt.timedelta(days=1)):
            today = day
            result = await client.call_tool("find_vendor_info", {"vendor_name": "Atlassian"})
            assert result.structured_content is not None and not result.is_error
            answers.append(dict(result.structured_content))
        return answers

    first, again, tomorrow = sample.run(scenario)
    days = [a["results"]["lifecycle"]["as_of"] for a in (first, again, tomorrow)]
    assert days == ["2026-03-31", "2026-03-31", "2026-04-01"]
    hits = [a["execution_context"]["cache_hit"] for a in (first, again, tomorrow)]
    assert hits == [False, True, False], hits


def test_a_page_lists_the_products_of_its_cycles_and_counts_them_all(sample: Harness) -> None:
    """A vendor's whole product list can be more than an answer may hold (the largest
    vendor's is): each page lists the products its cycles belong to."""
    first = sample.call("get_lifecycle", vendor_name="Atlassian", as_of=AS_OF, page_size=1)
    results = first["results"]
    assert results["product_count"] == 2
    assert [p["product"] for p in results["products"]] == [results["cycles"][0]["product"]]


def test_the_budget_says_which_part_of_a_vendors_answer_it_left_out(
    sample_kb: Database, embedder: Any, tmp_path: Path
) -> None:
    """Release cycles go first to fit the budget: a budget that only drops cycles
    leaves no entity or relationship out, and a tighter one says how many it left out."""
    whole = Harness(sample_kb, embedder, tmp_path / "whole").call(
        "find_vendor_info", vendor_name="Microsoft", response_mode="full"
    )["results"]
    assert whole["entities_left_out"] == whole["relationships_left_out"] == 0
    assert whole["lifecycle"]["cycles_left_out"] == 0
    tokens = len(orjson.dumps(whole)) // 4  # well above the graph's share

    def fitted(budget: int) -> dict[str, Any]:
        env = Harness(
            sample_kb, embedder, tmp_path / str(budget), max_tokens_per_response=budget
        ).call("find_vendor_info", vendor_name="Microsoft", response_mode="full")
        assert env["_metadata"]["status"] == "partial", env["warnings"]
        return env["results"]

    cycles_only = fitted(tokens - 200)
    assert cycles_only["lifecycle"]["cycles_left_out"] > 0
    assert cycles_only["entities_left_out"] == cycles_only["relationships_left_out"] == 0
    assert len(cycles_only["entities"]) == len(whole["entities"])
    tight = fitted(1_500)
    assert tight["relationships_left_out"] > 0
    for part in ("entities", "relationships"):
        assert len(tight[part]) + tight[f"{part}_left_out"] == len(whole[part])
