"""bench.sbom's synthetic bills are real bills of the corpus's package URLs, and its
accuracy check agrees with the tests' hand-checked answers (on the bills' notes)."""

from __future__ import annotations

from bench import bench_queries
from bench.sbom import accuracy, drawn_cycles, synthetic_bill
from kg.bom import read_bill
from kg.store import KnowledgeGraph
from sql.database import Database
from tests.fixtures.lifecycle import shared_bill


def test_synthetic_bills_are_half_matched(bill_kb: Database) -> None:
    with bill_kb.connect() as conn:
        rows = conn.execute(bench_queries()["sbom_purl_cycles"]).fetchall()
    assert rows and all(r["identifier"].startswith("pkg:") for r in rows)
    bill = read_bill(synthetic_bill(rows, 1000))
    assert len(bill.components) == 1000 and bill.problems == ()
    assert read_bill(synthetic_bill(rows, 1000)) == bill  # the same draw every run
    report = KnowledgeGraph(bill_kb).check_components(bill.components, as_of="2026-11-25")
    assert len(report.matched) + report.duplicates == 500  # every drawn component
    assert sum(report.unmatched_by_ecosystem().values()) == 500


def test_the_accuracy_check_finds_every_hand_checked_component(bill_kb: Database) -> None:
    shared_bill("laravel-7.12.0.cdx.json")  # skips without the shared data
    found = accuracy(KnowledgeGraph(bill_kb))
    assert (found["right"], found["components"]) == (6, 6)
    assert (found["statuses_right"], found["statuses"]) == (18, 18)
    assert found["wrong"] == []


def test_drawn_versions_resolve_to_the_cycle_they_were_drawn_from(bill_kb: Database) -> None:
    with bill_kb.connect() as conn:
        rows = conn.execute(bench_queries()["sbom_purl_cycles"]).fetchall()
    found = drawn_cycles(KnowledgeGraph(bill_kb), rows)
    assert found["of"] == 6 * len(rows)
    # the twelve notes' latest releases all belong to their own cycles
    assert found["right"] == found["of"], found["wrong_by_product"]
