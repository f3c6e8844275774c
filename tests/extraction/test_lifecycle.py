"""Release cycles as data: parsing the notes' releases tables, and the rebuild storing,
replacing and reporting them (real PostgreSQL, real models)."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from extraction.notes.corpus import parse_document
from extraction.notes.lifecycle import parse_lifecycle, parse_phase
from extraction.rebuild.pipeline import Rebuilder
from sql.database import Database
from tests.fixtures import REPO, SAMPLE

SHARED = REPO.parent / "shared" / "data" / "vendor_corpus" / "vendors"
NOTES = ("Atlassian/eol-confluence.md", "_unattributed/eol-python.md")

BAD = """---
title: Widget Server
permalink: /widget-server
alternate_urls:
  - /widgets
eolColumn: Standard Support
eoesColumn: Extended Support
releaseLabel: "Widget __RELEASE_CYCLE__"
releases:
  - releaseCycle: "3"
    releaseDate: 2024-02-01
    eol: 2024-13-01
    eoes: 2030-01-01
  - releaseCycle: "2"
    releaseDate: 2023-01-01
    eol: 2022-12-31
  - releaseCycle: "2"
    releaseDate: 2022-01-01
    eol: true
  - releaseCycle: "1"
    releaseDate: 2021
    eol: [2021, 2022]
    eoas: ""
    lts: soon
  - just text
---
Widget Server is sold by Widgets Ltd.
"""


def test_every_cycle_of_the_shared_corpus_parses_without_a_problem() -> None:
    if not SHARED.is_dir():
        pytest.skip("the shared vendor corpus is not beside this checkout")
    files = sorted(SHARED.glob("*/eol-*.md"))
    cycles = listed = 0
    for path in files:
        doc, problems = parse_document(
            path.relative_to(SHARED.parent).as_posix(), path.read_bytes()
        )
        assert doc is not None and doc.lifecycle is not None, path
        assert [p for p in problems if p.kind == "lifecycle"] == [], path
        cycles += len(doc.lifecycle.cycles)
        front = re.match(r"---\n(.*?)\n---", path.read_text(encoding="utf-8"), re.S)
        assert front is not None
        listed += len(yaml.safe_load(front.group(1))["releases"])
    assert len(files) == 464
    assert cycles == listed == 8351


@pytest.mark.parametrize(
    ("value", "phase", "wrong"),
    [
        (dt.date(2025, 1, 31), dt.date(2025, 1, 31), None),
        ("2025-01-31", dt.date(2025, 1, 31), None),
        (True, True, None),
        ("FALSE", False, None),
        (None, None, None),
        ("2024-13-01", None, "'2024-13-01' is not a date"),
        (2024, None, "2024 is not a date"),
        ("", None, "an empty value is not a date"),
        ([2024], None, "list is not a date"),
        ("soon", None, "'soon' is not a date"),
    ],
)
def test_support_dates_are_typed_or_named_as_wrong(value: Any, phase: Any, wrong: Any) -> None:
    got, problem = parse_phase(value)
    assert got == phase
    assert (problem is None) if wrong is None else (wrong in (problem or ""))


def test_bad_rows_are_reported_by_cycle_and_field_and_the_rest_kept() -> None:
    doc, problems = parse_document("vendors/Widgets/eol-widget-server.md", BAD.encode())
    assert doc is not None and doc.lifecycle is not None
    life = doc.lifecycle
    assert (life.product, life.permalink, life.aliases) == (
        "Widget Server",
        "widget-server",
        ("widgets",),
    )
    assert life.labels == {
        "eolColumn": "Standard Support",
        "eoesColumn": "Extended Support",
        "releaseLabel": "Widget __RELEASE_CYCLE__",
    }
    assert [c.cycle for c in life.cycles] == ["3", "2", "1"]  # the duplicate "2" is dropped
    three, two, one = life.cycles
    assert (three.eol, three.eoes, three.label) == (None, dt.date(2030, 1, 1), "Widget 3")
    assert (two.eol, two.release_date) == (dt.date(2022, 12, 31), dt.date(2023, 1, 1))
    assert (one.release_date, one.eol, one.eoas, one.lts) == (None, None, None, None)
    messages = sorted(p.message for p in problems if p.kind == "lifecycle")
    assert all(p.path == "vendors/Widgets/eol-widget-server.md" for p in problems)
    expected = [
        "releases[0] (3).eol: '2024-13-01' is not a date",
        "releases[1] (2).eol: end of life 2022-12-31 is before the release date 2023-01-01",
        "releases[2] (2).releaseCycle: duplicate of releases[1]; the first is kept",
        "releases[3] (1).eoas: an empty value is not a date",
        "releases[3] (1).eol: list is not a date",
        "releases[3] (1).lts: 'soon' is not a date",
        "releases[3] (1).releaseDate: 2021 is not a date",
        "releases[4]: is a str, not a cycle",
    ]
    assert len(messages) == len(expected)
    for message, start in zip(messages, sorted(expected), strict=True):
        assert message.startswith(start), (message, start)


def test_product_level_shapes_that_hold_no_cycles() -> None:
    assert parse_lifecycle({"title": "X"}) == (None, [])
    none, problems = parse_lifecycle({"title": "X", "releases": "3.0"})
    assert none is None and problems[0].message == "is a str, not a list of cycles"
    none, problems = parse_lifecycle({"releases": []})
    assert none is None and problems[0].field == "title"


def _cycles(db: Database) -> dict[tuple[str, str], dict[str, Any]]:
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT d.source_path, c.* FROM release_cycles c "
            "JOIN documents d ON d.id = c.document_id"
        ).fetchall()
    return {(r["source_path"], r["cycle"]): dict(r) for r in rows}


@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for note in NOTES:
        (root / "vendors" / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / "vendors" / note, root / "vendors" / note)
    (root / "vendors" / "Widgets").mkdir()
    (root / "vendors" / "Widgets" / "eol-widget-server.md").write_text(BAD)
    return root


def test_the_rebuild_stores_replaces_and_deletes_a_notes_cycles(
    db: Database, embedder: Any, extractor: Any, notes: Path
) -> None:
    rebuilder = Rebuilder(db, embedder=embedder, extractor=extractor)
    report = rebuilder.run(notes)
    stored = _cycles(db)
    confluence = "vendors/Atlassian/eol-confluence.md"
    assert report.release_cycles_written == len(stored) == 30 + 17 + 3  # rows of the tables
    assert stored[(confluence, "10.2")]["eol"] == dt.date(2027, 12, 2)
    assert stored[(confluence, "10.2")]["lts_flag"] is True
    widget = stored[("vendors/Widgets/eol-widget-server.md", "3")]
    assert (widget["eol"], widget["eol_flag"], widget["label"]) == (None, None, "Widget 3")
    lifecycle_problems = [p for p in report.problems if p.kind == "lifecycle"]
    assert len(lifecycle_problems) == 8
    assert {p.path for p in lifecycle_problems} == {"vendors/Widgets/eol-widget-server.md"}
    with db.connect() as conn:
        linked = conn.execute(
            "SELECT lp.product, e.name, e.type FROM lifecycle_products lp "
            "JOIN entities e ON e.id = lp.entity_id"
        ).fetchall()
        totals = conn.execute("SELECT * FROM lifecycle_products ORDER BY product").fetchall()
    assert {r["product"] for r in totals} == {"Confluence", "Python", "Widget Server"}
    assert ("Confluence", "Confluence", "PRODUCT") in {tuple(r.values()) for r in linked}

    # a changed note replaces its cycles; the other notes' rows stay as they were
    path = notes / "vendors" / "Atlassian" / "eol-confluence.md"
    text = path.read_text()
    text = text.replace("eol: 2027-12-02", "eol: 2028-01-15", 1)
    text = re.sub(r'  - releaseCycle: "10.1"\n(    .*\n)+\n', "", text, count=1)
    path.write_text(text)
    again = rebuilder.run(notes)
    after = _cycles(db)
    assert again.release_cycles_written == 29
    assert after[(confluence, "10.2")]["eol"] == dt.date(2028, 1, 15)
    assert (confluence, "10.1") not in after
    python = {k: v for k, v in stored.items() if k[0].endswith("eol-python.md")}
    assert {k: v for k, v in after.items() if k[0].endswith("eol-python.md")} == python

    # a deleted note takes its cycles with it
    path.unlink()
    rebuilder.run(notes)
    assert {k[0] for k in _cycles(db)} == {
        "vendors/_unattributed/eol-python.md",
        "vendors/Widgets/eol-widget-server.md",
    }


def test_a_knowledge_base_without_cycles_reads_them_on_the_next_rebuild(
    db: Database, embedder: Any, extractor: Any, notes: Path
) -> None:
    rebuilder = Rebuilder(db, embedder=embedder, extractor=extractor)
    rebuilder.run(notes)
    stored = _cycles(db)
    with db.connect() as conn:
        # as a knowledge base built before release cycles were stored looks
        conn.execute("DELETE FROM lifecycle_products")
        conn.execute("DELETE FROM kb_meta WHERE key = 'lifecycle_version'")
        conn.commit()
    report = rebuilder.run(notes)
    assert _cycles(db) == stored
    assert report.chunks_embedded == 0 and report.chunks_extracted == 0
    assert rebuilder.run(notes).up_to_date  # and the run after that has nothing to do


def test_a_label_that_is_a_site_template_is_no_label() -> None:
    life, _ = parse_lifecycle(
        {
            "title": "AIX",
            "releaseLabel": "{{'__RELEASE_CYCLE__'|split:'.'|pop}} TL",
            "releases": [{"releaseCycle": "7.3.2", "eol": False}],
        }
    )
    assert life is not None and life.cycles[0].label is None


def _identifiers(db: Database) -> dict[str, set[tuple[str, str]]]:
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT d.source_path, i.kind, i.key FROM product_identifiers i "
            "JOIN documents d ON d.id = i.document_id"
        ).fetchall()
    out: dict[str, set[tuple[str, str]]] = {}
    for r in rows:
        out.setdefault(r["source_path"], set()).add((r["kind"], r["key"]))
    return out


def test_the_rebuild_stores_replaces_and_deletes_a_products_identifiers(
    db: Database, embedder: Any, extractor: Any, notes: Path
) -> None:
    rebuilder = Rebuilder(db, embedder=embedder, extractor=extractor)
    rebuilder.run(notes)
    stored = _identifiers(db)
    widget = "vendors/Widgets/eol-widget-server.md"
    assert stored["vendors/Atlassian/eol-confluence.md"] == {
        ("cpe", "atlassian:confluence"),  # listed twice, as CPE 2.2 and 2.3
        ("name", "confluence"),
        ("name", "atlassian confluence"),  # its alternate_urls slug
    }
    python = stored["vendors/_unattributed/eol-python.md"]
    assert len([k for k in python if k[0] == "purl"]) == 69  # the note's 69 package URLs
    assert {("purl", "deb/ubuntu/python3.12"), ("cpe", "python:python")} <= python
    assert stored[widget] == {("name", "widget server"), ("name", "widgets")}

    # a changed note replaces its identifiers; one that is no package URL is reported
    path = notes / "vendors" / "Widgets" / "eol-widget-server.md"
    path.write_text(
        BAD.replace(
            "releases:\n",
            "identifiers:\n  - purl: pkg:maven/com.widgets/widget-server\n"
            "  - purl: widget-server\n  - repology: widget\nreleases:\n",
        )
    )
    report = rebuilder.run(notes)
    assert ("purl", "maven/com.widgets/widget-server") in _identifiers(db)[widget]
    assert any(p.path == widget and "identifiers[1].purl" in p.message for p in report.problems), (
        report.problems
    )

    # a deleted note takes them with it
    path.unlink()
    rebuilder.run(notes)
    assert widget not in _identifiers(db)


def test_a_knowledge_base_without_identifiers_reads_them_on_the_next_rebuild(
    db: Database, embedder: Any, extractor: Any, notes: Path
) -> None:
    rebuilder = Rebuilder(db, embedder=embedder, extractor=extractor)
    rebuilder.run(notes)
    stored = _identifiers(db)
    with db.connect() as conn:
        # as a knowledge base built before identifiers were stored (lifecycle version 1)
        conn.execute("DELETE FROM product_identifiers")
        conn.execute("UPDATE kb_meta SET value = '\"1\"' WHERE key = 'lifecycle_version'")
        conn.commit()
    report = rebuilder.run(notes)
    assert _identifiers(db) == stored
    assert report.chunks_embedded == 0 and report.chunks_extracted == 0
