"""``check_components`` through a real MCP client session: on the knowledge base the real
rebuild made of the notes the three real bills of materials name (the hand-checked
answers of ``tests/kg/data/sbom/``), every mode, paging, the unmatched counted, and
what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from sql.database import Database
from tests.fixtures.lifecycle import EXPECTED
from tests.fixtures.server import Harness, error_code

pytestmark = pytest.mark.slow

DAYS = ("2020-08-03", "2023-06-01", "2026-06-01")
UNMATCHED = [
    {"purl": "pkg:npm/%40types/node@14.0.23"},
    {"purl": "pkg:maven/io.dropwizard/dropwizard-core@1.3.15"},
    {"name": "left-pad", "version": "1.3.0"},
]


def _expected() -> list[dict[str, Any]]:
    out = []
    for path in sorted(EXPECTED.glob("*.expected.json")):
        out += orjson.loads(path.read_bytes())["matched"]
    return out


@pytest.fixture()
def bills(bill_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(bill_kb, embedder, tmp_path)


def test_every_hand_checked_component_on_three_dates(bills: Harness) -> None:
    expected = _expected()
    assert len(expected) == 6  # the purl-matched components of the three bills
    components = [{"purl": e["purl"], "ref": e["purl"]} for e in expected] + UNMATCHED
    for day_index, day in enumerate(DAYS):
        env = bills.call(
            "check_components", components=components, as_of=day, response_mode="preview"
        )
        assert env["_is_error"] is False, env
        results = env["results"]
        assert results["as_of"] == day and results["components"] == len(components)
        assert results["matched"] == len(expected)
        by_ref = {c["ref"]: c for c in results["checks"]}
        for e in expected:
            got = by_ref[e["purl"]]
            assert (got["product"], got["vendor"], got["cycle"]) == (
                e["product"],
                e["vendor"],
                e["cycle"],
            ), got
            assert got["status"] == e["status"][day_index], (e["purl"], day)
            assert got["match"]["method"] == "purl"
        assert results["unmatched_by_ecosystem"] == {"npm": 1, "maven": 1, "(no package URL)": 1}
        order = [c["status"] for c in results["checks"]]  # worst first
        rank = {"end of life": 0, "extended support only": 1, "unknown": 2, "supported": 3}
        assert order == sorted(order, key=lambda s: rank[s])


def test_modes_paging_and_the_unmatched(bills: Harness) -> None:
    components = [{"purl": e["purl"]} for e in _expected()] + UNMATCHED
    ids = bills.call("check_components", components=components, response_mode="ids_only")
    assert set(ids["results"]["checks"][0]) == {"ref", "product", "cycle", "status"}
    meta = bills.call("check_components", components=components, as_of=DAYS[2], within_days=400)
    first = meta["results"]["checks"][0]
    assert {"vendor", "version", "match", "support_ends", "ends_within"} <= set(first)
    assert "unmatched" not in meta["results"]
    full = bills.call("check_components", components=components, response_mode="full")
    assert {u["reason"] for u in full["results"]["unmatched"]}
    assert "phase_names" in full["results"]["checks"][0]

    async def pages(client: Any) -> list[dict[str, Any]]:
        seen, cursor = [], None
        while True:
            args: dict[str, Any] = {"components": components, "page_size": 4}
            if cursor:
                args["cursor"] = cursor
            result = await client.call_tool("check_components", args)
            env = result.structured_content
            seen.append(env)
            cursor = env["pagination"]["cursor"]
            if not cursor:
                return seen

    walked = bills.run(pages)
    assert [len(p["results"]["checks"]) for p in walked] == [4, 2]
    assert walked[0]["pagination"]["total_available"] == 6


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        ({"components": [{"version": "1.0"}]}, "INVALID_PARAMS", "needs a purl"),
        ({"components": [{"name": "a\x00b"}]}, "INVALID_PARAMS", "NUL"),
        ({"components": []}, "INVALID_PARAMS", "components"),
        ({"components": [{"purl": "pkg:npm/x", "colour": "red"}]}, "INVALID_PARAMS", "colour"),
        ({"components": [{"name": "x"}] * 5_001}, "INVALID_PARAMS", "components"),
        ({"components": [{"name": "x"}], "as_of": "2024-13-01"}, "INVALID_PARAMS", "date"),
        ({"components": "pkg:npm/express"}, "INVALID_PARAMS", "components"),
    ],
)
def test_what_is_refused(bills: Harness, arguments: dict[str, Any], code: str, says: str) -> None:
    env = bills.call("check_components", **arguments)
    assert env["_is_error"] and error_code(env) == code, env
    assert says in str(env), env


def test_a_knowledge_base_without_products_says_how_to_build_one(
    graph_db: Database, embedder: Any, tmp_path: Path
) -> None:
    env = Harness(graph_db, embedder, tmp_path).call(
        "check_components", components=[{"purl": "pkg:npm/express@4.17.1"}]
    )
    assert env["_is_error"] and error_code(env) == "NOT_BUILT", env
    assert "rebuild-graph" in str(env)
