"""Bills of materials checked against the release cycles (kg.components and ``python -m
kg check-sbom``) on a knowledge base the real rebuild built from the notes the three
real bills name: every purl-matched component against the hand-checked answers of
``tests/kg/data/sbom/`` (product, vendor, note, cycle, status on three dates), the
same bill as SPDX, a hand-written SPDX bill (CPE and name matches), bad input, gates."""

from __future__ import annotations

import datetime as dt
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from extraction.rebuild.pipeline import Rebuilder
from kg import KnowledgeGraph
from kg.bom import Component, read_bill
from kg.components import ComponentsReport, report_dict
from kg.errors import IdentifiersMissing, InvalidGraphRequest
from kg.settings import GraphSettings
from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.lifecycle import EXPECTED, SHARED, shared_bill, to_spdx

BILLS = ("dropwizard-1.3.15.cdx.json", "juice-shop-11.1.2.cdx.json", "laravel-7.12.0.cdx.json")


def expected(bill: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(
        (EXPECTED / bill.replace(".cdx.json", ".expected.json")).read_bytes()
    )
    return data


@pytest.fixture()
def kg(bill_kb: Database) -> KnowledgeGraph:
    return KnowledgeGraph(bill_kb)


def check(kg: KnowledgeGraph, data: bytes, as_of: str, **kw: Any) -> ComponentsReport:
    bill = read_bill(data)
    return kg.check_components(bill.components, as_of=as_of, problems=bill.problems, **kw)


def _answer(report: ComponentsReport, date_index: int) -> dict[str, dict[str, Any]]:
    return {
        c.component.purl or "": {
            "method": c.method,
            "product": c.product.product,
            "vendor": c.product.vendor,
            "note": c.product.source_path,
            "cycle": c.cycle.cycle if c.cycle else None,
            "status": c.status,
            "inferred": c.inferred,
            "behind_latest": c.behind_latest,
            "date": date_index,
        }
        for c in report.matched
    }


def _expected_answer(want: dict[str, Any], date_index: int) -> dict[str, dict[str, Any]]:
    return {
        m["purl"]: {
            "method": m["method"],
            "product": m["product"],
            "vendor": m["vendor"],
            "note": m["note"],
            "cycle": m["cycle"],
            "status": m["status"][date_index],
            "inferred": m["inferred"] and m["status"][date_index] == "end of life",
            "behind_latest": m["behind_latest"],
            "date": date_index,
        }
        for m in want["matched"]
    }


@pytest.mark.parametrize("bill", BILLS)
def test_every_component_of_the_real_bills_as_hand_checked(kg: KnowledgeGraph, bill: str) -> None:
    want = expected(bill)
    data = shared_bill(bill).read_bytes()
    for i, day in enumerate(want["dates"]):
        report = check(kg, data, day)
        assert report.given == want["components"] and report.duplicates == 0
        assert _answer(report, i) == _expected_answer(want, i)
        assert report.unmatched_by_ecosystem() == want["unmatched_by_ecosystem"]
        not_matched = {u.component.purl: u.reason for u in report.unmatched}
        assert all(n["purl"] in not_matched for n in want["not_matched"])


@pytest.mark.parametrize("bill", BILLS)
def test_the_same_bill_as_spdx_gives_the_same_answer(kg: KnowledgeGraph, bill: str) -> None:
    data = shared_bill(bill).read_bytes()
    as_cdx, as_spdx = check(kg, data, "2023-06-01"), check(kg, to_spdx(data), "2023-06-01")
    assert _answer(as_spdx, 0) == _answer(as_cdx, 0)
    assert as_spdx.unmatched_by_ecosystem() == as_cdx.unmatched_by_ecosystem()


def test_near_misses_are_unmatched_with_the_reason(kg: KnowledgeGraph) -> None:
    report = check(kg, shared_bill("juice-shop-11.1.2.cdx.json").read_bytes(), "2023-06-01")
    reasons = {u.component.purl: u.reason for u in report.unmatched}
    assert (
        "lists package URLs (apk, generic, github) and not this one"
        in reasons["pkg:npm/sqlite3@4.2.0"]
    )  # its name is SQLite's slug, but SQLite's note lists no npm package
    assert "no note lists" in reasons["pkg:npm/%40types/node@14.0.23"]  # 'types node'


def test_the_hand_written_spdx_bill(kg: KnowledgeGraph) -> None:
    report = check(
        kg, (EXPECTED / "acme-portal.spdx.json").read_bytes(), "2026-06-01", within_days=365
    )
    by_name = {c.component.name: c for c in report.matched}
    kernel = by_name["symfony/http-kernel"]  # its purl is listed nowhere; its CPE is
    assert (kernel.method, kernel.confidence, kernel.product.product) == ("cpe", 0.9, "Symfony")
    assert kernel.cycle is not None and kernel.cycle.cycle == "5.4"
    sqlite = by_name["SQLite"]  # a name only
    assert (sqlite.method, sqlite.confidence, sqlite.cycle.cycle if sqlite.cycle else None) == (
        "name",
        0.6,
        "3",
    )
    log4j = by_name["log4j-core"]
    assert (log4j.product.product, log4j.cycle.cycle if log4j.cycle else None) == (
        "Apache Log4j",
        "2",
    )
    grunt = by_name["grunt"]  # no version: the product, no cycle
    assert (grunt.cycle, grunt.status, grunt.cycle_reason) == (
        None,
        "unknown",
        "the component gives no version",
    )
    assert report.duplicates == 1  # express, listed twice
    assert [c.component.name for c in report.matched].count("express") == 1
    assert report.unmatched_by_ecosystem() == {"npm": 2, "(no package URL)": 1}
    assert any("npm:left-pad@1.3.0" in p for p in report.problems)
    # worst first: end of life, extended support only, unknown, supported
    ranks = ["end of life", "extended support only", "unknown", "supported"]
    assert [ranks.index(c.status) for c in report.matched] == sorted(
        ranks.index(c.status) for c in report.matched
    )


def test_components_given_directly(kg: KnowledgeGraph) -> None:
    report = kg.check_components(
        [
            {"purl": "pkg:npm/express@4.17.1"},  # the version in the purl
            {"purl": "pkg:npm/express@4.17.1", "version": "3.21.2"},  # the version given
            {"purl": "pkg:npm/express"},  # none at all
            {"name": "Laravel", "version": "v10.48.4"},
            Component(name="guzzle", version="7.9.2"),
            Component(name="guzzle", group="guzzlehttp", version="7.9.2"),  # 'guzzlehttp guzzle'
        ],
        as_of=dt.date(2026, 6, 1),
    )
    answers = {
        (c.product.product, c.cycle.cycle if c.cycle else None, c.status) for c in report.matched
    }
    assert answers == {
        ("Express", "4", "supported"),
        ("Express", "3", "extended support only"),  # eol 2015-07-05, eoes false
        ("Express", None, "unknown"),
        ("Laravel", "10", "end of life"),  # eol 2025-02-04
        ("Guzzle", "7", "supported"),  # matched by name: no purl given
    }
    assert [u.component.group for u in report.unmatched] == ["guzzlehttp"]
    for bad, says in (
        ("express", "must be a list"),
        ([{"version": "1.0"}], r"components\[0\] needs a purl, a cpe or a name"),
        ([{"purl": 42}], r"components\[0\].purl must be text"),
        (["pkg:npm/express"], r"components\[0\] must be an object"),
    ):
        with pytest.raises(InvalidGraphRequest, match=says):
            kg.check_components(bad)
    with pytest.raises(InvalidGraphRequest, match="is not a date"):
        kg.check_components([], as_of="2026-02-30")
    with pytest.raises(InvalidGraphRequest, match="within_days must be a whole number"):
        kg.check_components([], within_days=0)


def test_problems_of_many_broken_package_urls_are_capped(kg: KnowledgeGraph) -> None:
    broken = [{"purl": f"npm:broken-{i}@1.0", "name": f"broken-{i}"} for i in range(120)]
    report = kg.check_components(broken)
    assert len(report.problems) == 51 and report.problems[-1] == "... and 70 more problems"
    assert report.unmatched_by_ecosystem() == {"(no package URL)": 120}


def test_a_knowledge_base_that_cannot_match_says_why(
    db: Database, embedder: Any, extractor: Any, tmp_path: Path
) -> None:
    kg = KnowledgeGraph(db)
    with pytest.raises(IdentifiersMissing, match="no products with release cycles yet"):
        kg.check_components([{"purl": "pkg:npm/express@4.17.1"}])
    note = tmp_path / "vendors" / "HeroDevs" / "eol-express.md"
    note.parent.mkdir(parents=True)
    note.write_bytes((SHARED / "HeroDevs" / "eol-express.md").read_bytes())
    Rebuilder(db, embedder=embedder, extractor=extractor).run(tmp_path)
    assert len(kg.check_components([{"purl": "pkg:npm/express@4.17.1"}]).matched) == 1
    with db.connect() as conn:  # as a knowledge base built before identifiers were stored
        conn.execute("DELETE FROM product_identifiers")
        conn.commit()
    with pytest.raises(IdentifiersMissing, match="built before product identifiers"):
        kg.check_components([{"purl": "pkg:npm/express@4.17.1"}])
    # something matching is never second-guessed: an unmatched bill on a good base is fine
    assert kg.check_components([]).matched == ()


def test_a_hundred_thousand_components_are_checked_and_more_refused(bill_kb: Database) -> None:
    many = [{"purl": f"pkg:npm/pkg{i}@1.0.0", "name": f"pkg{i}", "version": "1.0.0"}
            for i in range(99_990)]  # fmt: skip
    many += [{"purl": "pkg:npm/express@4.17.1", "version": "4.17.1"}] * 10
    kg = KnowledgeGraph(bill_kb)
    start = time.perf_counter()
    report = kg.check_components(many, as_of="2026-06-01")
    seconds = time.perf_counter() - start
    assert (report.given, report.duplicates, len(report.matched)) == (100_000, 9, 1)
    assert report.unmatched_by_ecosystem() == {"npm": 99_990}
    assert seconds < 60, seconds  # measured about 3 s; bench.sbom measures it properly
    small = KnowledgeGraph(bill_kb, GraphSettings(sbom_max_components=1000))
    with pytest.raises(InvalidGraphRequest, match="1,001 components given; at most 1,000"):
        small.check_components(many[:1001])


def run(
    db: Database | None, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_module("kg", *args, db=db, stdin=stdin, env={"COLUMNS": "200"}, timeout=180)


def test_the_cli_table_json_and_gates(bill_kb: Database, kg: KnowledgeGraph) -> None:
    path = str(shared_bill("laravel-7.12.0.cdx.json"))
    table = run(bill_kb, "check-sbom", path, "--as-of", "2023-06-01")
    assert table.returncode == 0, table.stderr
    assert "Laravel (Taylor Otwell)" in table.stdout and "end of life" in table.stdout
    assert "62 components (0 duplicates): 2 matched" in table.stdout
    assert "unmatched: 60 (composer 60)" in table.stdout
    as_json = run(bill_kb, "check-sbom", path, "--as-of", "2023-06-01", "--json")
    data = orjson.loads(as_json.stdout)
    direct = report_dict(check(kg, Path(path).read_bytes(), "2023-06-01"))
    assert {k: v for k, v in data.items() if k not in ("bill", "gate")} == direct
    assert data["bill"]["format"] == "CycloneDX 1.4" and data["gate"]["failed"] is False
    # Laravel 7 has reached end of life by 2023-06-01: the gate fails
    gate = run(bill_kb, "check-sbom", path, "--as-of", "2023-06-01", "--fail-on", "end-of-life")
    assert gate.returncode == 1 and "gate failed: 1 component" in gate.stderr
    # on 2020-08-03 nothing has ended, but Laravel 7 ends within 365 days (2021-03-03)
    fine = run(bill_kb, "check-sbom", path, "--as-of", "2020-08-03", "--fail-on", "end-of-life")
    assert fine.returncode == 0, fine.stderr
    soon = run(
        bill_kb, "check-sbom", path, "--as-of", "2020-08-03", "--within", "365",
        "--fail-on", "within", "--json",
    )  # fmt: skip
    assert soon.returncode == 1 and orjson.loads(soon.stdout)["ending_within"] == 1
    piped = run(bill_kb, "check-sbom", "-", "--json", stdin=Path(path).read_text())
    assert piped.returncode == 0 and orjson.loads(piped.stdout)["matched"] == 2


@pytest.mark.parametrize(
    ("content", "args", "says"),
    [
        ('{"name": "package.json"}', (), "neither CycloneDX"),
        ('{"bomFormat": "CycloneDX", "specVersion": "1.4", "compo', (), "truncated"),
        ("<bom/>", (), "is XML"),
        (
            '{"bomFormat": "CycloneDX", "specVersion": "1.4"}',
            ("--as-of", "2024-13-01"),
            "not a date",
        ),
        ('{"bomFormat": "CycloneDX", "specVersion": "1.4"}', ("--within", "0"), "within_days"),
        (
            '{"bomFormat": "CycloneDX", "specVersion": "1.4"}',
            ("--fail-on", "within"),
            "needs --within",
        ),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line_with_exit_2(
    tmp_path: Path, content: str, args: tuple[str, ...], says: str
) -> None:
    bill = tmp_path / "bill.json"
    bill.write_text(content)
    # no database: a bad file or option is refused before one is opened
    proc = run(None, "check-sbom", str(bill), *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    missing = run(None, "check-sbom", str(tmp_path / "nowhere.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    folder = run(None, "check-sbom", str(tmp_path))
    assert folder.returncode == 2 and "is a folder" in folder.stderr
