"""The relation-rules harness: its seeded sample, its tallies and its judgements."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from evals.cli import HarnessError
from evals.rules import Found, draw, load_checks, report, untuned_folders


def F(rule: str, source: str, target: str, folder: str = "Acme", rtype: str = "BASED_ON") -> Found:
    return Found(
        rule=rule,
        type=rtype,
        source=source,
        target=target,
        sentence=f"{source} is built on {target}.",
        confidence=0.6,
        path=f"vendors/{folder}/eol-x.md",
        rules=(rule,),
    )


def test_the_sample_is_seeded_leaves_the_holdout_out_and_keeps_its_order() -> None:
    found = [
        F("pattern:based_on", f"X{i}", "Y", "Acme" if i % 2 else "Kept_Aside") for i in range(40)
    ]
    a = draw(found, 5, 41, frozenset({"Kept_Aside"}))
    assert a == draw(list(reversed(found)), 5, 41, frozenset({"Kept_Aside"}))
    assert len(a) == 5 and all(f.path.startswith("vendors/Acme/") for f in a)
    assert a != draw(found, 5, 42, frozenset({"Kept_Aside"}))
    assert len(draw(found[:3], 30, 41, frozenset())) == 3  # fewer than asked: all of them


def test_the_report_counts_findings_relationships_and_checked_precision() -> None:
    found = [
        F("pattern:based_on", "A", "B"),
        F("pattern:based_on", "C", "D"),
        F("folder", "V", "P", rtype="PRODUCES"),
    ]
    checks = {found[0].key: True, found[1].key: False}
    data = report(found, Counter({("pattern:based_on", "BASED_ON"): 7}), checks, n=30, seed=1)
    rows = {(r["rule"], r["type"]): r for r in data["rules"]}
    based = rows["pattern:based_on", "BASED_ON"]
    assert (based["findings"], based["relationships"], based["strongest"]) == (7, 2, 2)
    assert (based["checked"], based["correct"], based["precision"]) == (2, 1, 0.5)
    folder = rows["folder", "PRODUCES"]
    assert folder["findings"] == 0 and folder["checked"] == 0 and folder["precision"] is None


def test_a_judgement_names_a_relationship_by_its_content_not_its_id() -> None:
    a, b = F("pattern:based_on", "A", "B"), F("pattern:based_on", "A", "B")
    assert a.key == b.key and a.key != F("pattern:based_on", "A", "C").key


def test_judgements_and_splits_are_read_and_a_broken_file_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "checks.json"
    good.write_bytes(
        orjson.dumps([{"key": "k1", "correct": True}, {"key": "k2", "correct": False}])
    )
    assert load_checks(good) == {"k1": True, "k2": False}
    assert load_checks(tmp_path / "none.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"key": 1}')
    with pytest.raises(HarnessError, match="not a list of judgements"):
        load_checks(bad)
    splits = tmp_path / "splits.json"
    splits.write_bytes(b'{"tune": ["A"], "holdout": ["B", "C"], "tune7": ["D"]}')
    assert untuned_folders(splits) == {"B", "C", "D"}
