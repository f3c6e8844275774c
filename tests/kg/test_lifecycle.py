"""Lifecycle questions through the graph API and ``python -m kg``, on the sample
knowledge base built by the real rebuild (real PostgreSQL, real models)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from typing import Any

import orjson
import pytest

from kg import KnowledgeGraph
from kg.errors import (
    InvalidGraphRequest,
    ProductAmbiguous,
    ProductNotFound,
    VendorNotFound,
    VersionNotFound,
)
from kg.lifecycle import Product, lifecycle_dict, resolve_product
from sql.database import Database
from sql.names import normalize_name
from tests.fixtures import REPO
from tests.fixtures.lifecycle import shared_note

AS_OF = dt.date(2026, 1, 15)


@pytest.fixture()
def kg(sample_kb: Database) -> KnowledgeGraph:
    return KnowledgeGraph(sample_kb)


def test_a_vendors_products_with_every_cycle_and_its_status(kg: KnowledgeGraph) -> None:
    answer = kg.lifecycle("atlassian", as_of=AS_OF)
    assert answer.vendor == "Atlassian" and answer.as_of == AS_OF
    products = {p.product.product: p for p in answer.products}
    assert set(products) == {"Confluence", "Jira Software"}
    jira = {c.row.cycle: c for c in products["Jira Software"].cycles}
    assert jira["10.2"].status.status == "supported"  # eol 2026-11-20
    assert jira["10.2"].status.next_change_date == dt.date(2026, 11, 20)
    assert jira["10.2"].status.days_to_next_change == 309
    assert (
        kg.lifecycle("atlassian", "jira software", as_of="2026-12-01")
        .products[0]
        .cycles[[c.row.cycle for c in products["Jira Software"].cycles].index("10.2")]
        .status.status
        == "end of life"
    )
    confluence = products["Confluence"].product
    assert confluence.phase_names()["eol"] == "Support"  # eolColumn: Support
    assert confluence.entity_id is not None  # linked to the vendor graph's product
    counts = products["Confluence"].counts()
    assert sum(counts.values()) == len(products["Confluence"].cycles)


@pytest.mark.parametrize(
    ("vendor", "product", "found"),
    [
        ("Atlassian", "CONFLUENCE", "Confluence"),
        ("Atlassian", "atlassian-confluence", "Confluence"),  # an alternate_urls slug
        ("Atlassian", "Atlassian Confluence", "Confluence"),  # the vendor's name before it
        ("Atlassian", "Confluense", "Confluence"),  # a typo
        ("Microsoft", ".NET", "Microsoft .NET"),  # the title without its vendor
        ("Microsoft", "dotnet", "Microsoft .NET"),  # the permalink
        (None, "postgresql", "PostgreSQL"),  # any vendor's product
    ],
)
def test_product_names_resolve_loosely(
    kg: KnowledgeGraph, vendor: str | None, product: str, found: str
) -> None:
    answer = kg.lifecycle(vendor, product, as_of=AS_OF)
    assert [p.product.product for p in answer.products] == [found]


def test_a_version_resolves_to_its_cycle(kg: KnowledgeGraph) -> None:
    answer = kg.lifecycle("_unattributed", "Python", version="3.12.1", as_of=AS_OF)
    assert answer.version is not None
    assert (answer.version.cycle, answer.version.latest) == ("3.12", "3.12.14")
    assert answer.version.is_latest is False
    assert kg.lifecycle(None, "python", version="3.12.14").version.is_latest is True  # type: ignore[union-attr]
    # the version written after the product's name
    both = kg.lifecycle(None, "Python 3.12", as_of=AS_OF)
    assert both.version is not None and both.version.cycle == "3.12"


def test_refusals_name_what_is_wrong(kg: KnowledgeGraph) -> None:
    with pytest.raises(ProductNotFound, match="No product 'Excel' with release cycles of"):
        kg.lifecycle("Microsoft", "Excel")
    with pytest.raises(VersionNotFound, match=r"Version '1\.0' belongs to no release cycle"):
        kg.lifecycle(None, "python", version="1.0")
    with pytest.raises(VendorNotFound):
        kg.lifecycle("Initech")
    for as_of in ("2024-13-01", "2024", "", "yesterday"):
        with pytest.raises(InvalidGraphRequest, match="is not a date"):
            kg.lifecycle("Atlassian", as_of=as_of)
    for as_of in (2024, ["2024-01-01"]):
        with pytest.raises(InvalidGraphRequest, match="as_of must be a date"):
            kg.lifecycle("Atlassian", as_of=as_of)  # type: ignore[arg-type]
    with pytest.raises(InvalidGraphRequest, match="Give a vendor, a product or both"):
        kg.lifecycle()
    with pytest.raises(InvalidGraphRequest, match="A version needs one product"):
        kg.lifecycle("Atlassian", version="10.2")
    for days in (0, -1, 100_000, True, 1.5):
        with pytest.raises(InvalidGraphRequest, match="within_days must be a whole number"):
            kg.eol_risk(within_days=days)  # type: ignore[arg-type]


def test_ambiguous_product_names_list_the_candidates() -> None:
    def p(i: int, vendor: str, title: str) -> Product:
        return Product(i, i, vendor, title, normalize_name(title), None, (), None, {}, None, "")

    products = [p(1, "Acme", "Acme Cloud"), p(2, "Globex", "Globex Cloud"), p(3, "Initech", "TPS")]
    with pytest.raises(ProductAmbiguous) as found:
        resolve_product("cloud", products, None)
    assert found.value.candidates == ("Acme Cloud (Acme)", "Globex Cloud (Globex)")


def test_eol_risk_lists_every_end_of_support_in_the_window_soonest_first(
    kg: KnowledgeGraph,
) -> None:
    events = kg.eol_risk(within_days=365, as_of=AS_OF)
    assert events, "the sample notes hold ends of support in 2026"
    assert [e.day for e in events] == sorted(e.day for e in events)
    assert all(AS_OF <= e.day <= AS_OF + dt.timedelta(days=365) for e in events)
    assert all(e.days == (e.day - AS_OF).days for e in events)
    assert any(e.product == "Jira Software" and e.cycle == "10.2" for e in events)
    only = kg.eol_risk(within_days=365, as_of=AS_OF, vendor="Atlassian")
    assert only and {e.vendor for e in only} == {"Atlassian"}
    assert {e.category for e in kg.eol_risk(within_days=365, as_of=AS_OF, category="OS")} <= {"os"}
    assert "server-app" in kg.lifecycle_categories()


def _kg(db: Database, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kg", *args],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": db.conninfo, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_cli_prints_tables_and_the_same_answer_as_json(
    kg: KnowledgeGraph, sample_kb: Database
) -> None:
    table = _kg(sample_kb, "lifecycle", "Atlassian", "Jira Software", "--as-of", "2026-01-15")
    assert table.returncode == 0, table.stderr
    assert "Jira Software (Atlassian) on 2026-01-15" in table.stdout and "supported" in table.stdout
    as_json = _kg(sample_kb, "lifecycle", "Atlassian", "--as-of", "2026-01-15", "--json")
    assert orjson.loads(as_json.stdout) == lifecycle_dict(kg.lifecycle("Atlassian", as_of=AS_OF))
    version = _kg(sample_kb, "lifecycle", "_unattributed", "python", "--version", "3.12.1")
    assert "version 3.12.1: cycle 3.12, not the latest (3.12.14)" in version.stdout
    risk = _kg(sample_kb, "eol-risk", "--within", "365", "--as-of", "2026-01-15", "--json")
    rows: list[dict[str, Any]] = orjson.loads(risk.stdout)
    assert [r["date"] for r in rows] == sorted(r["date"] for r in rows) and rows


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("lifecycle", "Atlassian", "--as-of", "2024-13-01"), "is not a date"),
        (("lifecycle", "Atlassian", "Bamboo"), "No product 'Bamboo'"),
        (("lifecycle", "Initech"), "not found"),
        (("eol-risk", "--within", "0"), "within_days must be a whole number from 1"),
        (("eol-risk", "--within", "100000"), "within_days must be a whole number from 1"),
        (("lifecycle", "_unattributed", "python", "--version", "9.9"), "belongs to no release"),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line(
    sample_kb: Database, args: tuple[str, ...], says: str
) -> None:
    proc = _kg(sample_kb, *args)
    assert proc.returncode == 1, proc.stdout
    assert says in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_product_filed_under_another_vendor_is_named(kg: KnowledgeGraph) -> None:
    with pytest.raises(ProductNotFound) as found:
        kg.lifecycle("Guido van Rossum", "Python")
    assert "'Python' is filed under the vendor '_unattributed'" in str(found.value)
    assert found.value.suggestions == ("Python (_unattributed)",)


def test_a_version_that_names_the_cycle_says_nothing_about_latest(kg: KnowledgeGraph) -> None:
    answer = kg.lifecycle(None, "python", version="3.12")
    assert answer.version is not None
    assert (answer.version.cycle, answer.version.is_latest) == ("3.12", None)


def _real_products(*notes: str) -> list[Product]:
    """Products as the rebuild stores them, read from shared corpus notes (the vendor
    is the folder's name, as its identity rule makes it for these four folders)."""
    out = []
    for i, note in enumerate(notes):
        life = shared_note(note).lifecycle
        assert life is not None
        vendor = note.split("/")[0].replace("_", " ")
        out.append(
            Product(i, i, vendor, life.product, normalize_name(life.product), life.permalink,
                    tuple(life.aliases), None, {}, None, note)
        )  # fmt: skip
    return out


def test_an_exact_product_title_wins_over_a_vendor_prefix_or_slug() -> None:
    products = _real_products(
        "Amazon/eol-amazon-opensearch.md",
        "Amazon/eol-opensearch.md",
        "Microsoft/eol-microsoft-build-of-openjdk.md",
        "Red_Hat/eol-red-hat-build-of-openjdk.md",
    )
    for asked, found in (
        ("OpenSearch", "OpenSearch"),  # was: ambiguous with 'Amazon OpenSearch'
        ("opensearch", "OpenSearch"),
        ("Amazon OpenSearch", "Amazon OpenSearch"),
        ("aws-opensearch", "Amazon OpenSearch"),  # an alternate_urls slug
        ("Microsoft Build of OpenJDK", "Microsoft Build of OpenJDK"),  # was: ambiguous
        ("Red Hat build of OpenJDK", "Red Hat build of OpenJDK"),
        ("redhat-openjdk", "Red Hat build of OpenJDK"),
    ):
        assert resolve_product(asked, products, None).product == found, asked
    # a name that only matches after dropping each product's own vendor stays ambiguous
    with pytest.raises(ProductAmbiguous):
        resolve_product("build of openjdk", products, None)


def test_the_cli_reads_a_lone_name_no_vendor_has_as_a_product(sample_kb: Database) -> None:
    found = _kg(sample_kb, "lifecycle", "PostgreSQL", "--as-of", "2026-01-15", "--json")
    assert found.returncode == 0, found.stderr
    assert [p["product"] for p in orjson.loads(found.stdout)["products"]] == ["PostgreSQL"]
    missing = _kg(sample_kb, "lifecycle", "Initech")
    assert missing.returncode == 1 and "Vendor 'Initech' not found" in missing.stderr


def test_a_version_in_a_bills_notation_resolves_through_the_api(kg: KnowledgeGraph) -> None:
    # the notations themselves are checked on real release tables in test_versions.py
    answer = kg.lifecycle(None, "python", version="v3.12.1+build.7", as_of=AS_OF)
    assert answer.version is not None and answer.version.cycle == "3.12"
