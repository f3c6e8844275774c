"""Vendor graphs from the notes' structure, through the real rebuild: the corpus
gazetteer across notes, its incremental upkeep, and bad front matter."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extraction.rebuild.pipeline import Rebuilder
from sql.database import Database
from tests.fixtures.corpus import snapshot

NOTES = {
    "vendors/Dan_Abramov/topic-redux.md": """---
created_by: Dan Abramov and Andrew Clark
display_name: Redux
related: javascript, react, devops
topic: redux
github_url: https://github.com/reduxjs/redux
---
Redux is a predictable state container for JavaScript apps. Redux is often used with React.
""",
    "vendors/Meta/topic-react.md": """---
created_by: Jordan Walke
display_name: React
topic: react
github_url: https://github.com/facebook/react
---
React is a library for user interfaces. It competes with Vue in many projects.
""",
    "vendors/HeroDevs/eol-vue.md": """---
title: Vue
permalink: /vue
identifiers:
  - cpe: cpe:2.3:a:vuejs:vue.js
---
> [Vue](https://vuejs.org/) is a progressive JavaScript framework. HeroDevs sells
> extended support for it. See also [React](/react) and [the docs](/nowhere).
""",
    "vendors/Red_Hat/eol-rhel.md": """---
title: Red Hat Enterprise Linux
permalink: /rhel
identifiers:
  - cpe: cpe:/o:redhat:enterprise_linux
---
> Red Hat Enterprise Linux is a Linux distribution developed by Red Hat for the commercial
> market. Maintenance Support and Extended Life Cycle Support (ELS) follow.
""",
}


def write(root: Path, notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def graph(db: Database, vendor: str) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    with db.connect() as conn:
        entities = {
            r["name"]: r["type"]
            for r in conn.execute(
                "SELECT e.name, e.type FROM entities e JOIN vendors v ON v.id = e.vendor_id "
                "WHERE v.name = %s",
                (vendor,),
            )
        }
        edges = {
            (r["s"], r["type"], r["t"])
            for r in conn.execute(
                "SELECT s.name AS s, r.type, t.name AS t FROM relationships r "
                "JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id "
                "JOIN vendors v ON v.id = r.vendor_id WHERE v.name = %s AND r.type <> "
                "'MENTIONED_WITH'",
                (vendor,),
            )
        }
    return entities, edges


def confidence_of(db: Database, vendor: str, name: str) -> float | None:
    with db.connect() as conn:
        row = conn.execute(
            "SELECT e.confidence FROM entities e JOIN vendors v ON v.id = e.vendor_id "
            "WHERE v.name = %s AND e.name = %s",
            (vendor, name),
        ).fetchone()
    return None if row is None else float(row["confidence"])


FullRebuildCheck = Callable[[Path], None]


@pytest.fixture()
def equals_a_full_rebuild(
    db: Database, fresh_database: str, embedder: Any, extractor: Any
) -> FullRebuildCheck:
    """Asserts that what incremental rebuilds left in ``db`` is what one full rebuild
    of a notes folder makes in an empty database."""
    from sql.database import open_database
    from sql.settings import DatabaseSettings

    def check(root: Path) -> None:
        full = open_database(DatabaseSettings(database_url=fresh_database))
        Rebuilder(full, embedder=embedder, extractor=extractor).run(root)
        assert snapshot(db) == snapshot(full)

    return check


@pytest.fixture()
def rebuilder(db: Database, embedder: Any, extractor: Any) -> Rebuilder:
    return Rebuilder(db, embedder=embedder, extractor=extractor)


def test_structure_gives_makers_types_and_no_filing_facts(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    rebuilder.run(write(tmp_path / "notes", NOTES))
    entities, edges = graph(db, "Dan Abramov")
    assert entities["Dan Abramov"] == "PERSON" and entities["Redux"] == "PRODUCT"
    assert entities["React"] == "PRODUCT"  # typed by the React note, wherever it is named
    assert {("Dan Abramov", "PRODUCES", "Redux"), ("Andrew Clark", "PRODUCES", "Redux")} <= edges
    assert ("Redux", "RELATED_TO", "React") in edges or ("React", "RELATED_TO", "Redux") in edges
    assert not any("devops" in e.lower() for e in entities)  # a generic topic: no entity
    herodevs, herodevs_edges = graph(db, "HeroDevs")
    assert herodevs["HeroDevs"] == "ORG" and herodevs["Vue"] == "PRODUCT"
    assert not any(s == "HeroDevs" and r == "PRODUCES" for s, r, _ in herodevs_edges)
    red_hat, red_hat_edges = graph(db, "Red Hat")
    assert ("Red Hat", "PRODUCES", "Red Hat Enterprise Linux") in red_hat_edges
    assert ("Red Hat Enterprise Linux", "BASED_ON", "Linux") in red_hat_edges
    assert not {"Maintenance Support", "ELS", "Extended Life Cycle Support"} & set(red_hat)
    with db.connect() as conn:
        # every relationship's evidence is a chunk of the note that states it
        rows = conn.execute(
            "SELECT r.type, d.source_path FROM relationships r JOIN chunks c "
            "ON c.id = r.evidence_chunk_id JOIN documents d ON d.id = c.document_id "
            "JOIN vendors v ON v.id = r.vendor_id WHERE v.name = 'Dan Abramov' "
            "AND r.type = 'PRODUCES'"
        ).fetchall()
    assert {r["source_path"] for r in rows} == {"vendors/Dan_Abramov/topic-redux.md"}


def test_front_matter_names_are_mentioned_where_stated_and_fillers_name_nobody(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    notes = {
        "vendors/W3C/topic-rdf.md": "---\ndisplay_name: RDF\ncreated_by: W3C, IBM and others\n"
        "related: semantic-web, sparql, devops\ntopic: rdf\n---\nRDF is a data model.\n",
    }
    rebuilder.run(write(tmp_path / "notes", notes))
    entities, edges = graph(db, "W3C")
    assert ("RDF", "RELATED_TO", "Sparql") in edges  # a slug no note is, shaped like a name
    assert {("W3C", "PRODUCES", "RDF"), ("IBM", "PRODUCES", "RDF")} <= edges
    assert not {"others", "Others", "devops", "Devops"} & set(entities)
    with db.connect() as conn:
        mentioned = {
            r["name"]: r["source_path"]
            for r in conn.execute(
                "SELECT e.name, d.source_path FROM entity_mentions m "
                "JOIN entities e ON e.id = m.entity_id JOIN chunks c ON c.id = m.chunk_id "
                "JOIN documents d ON d.id = c.document_id"
            )
        }
    # the slug's entity is stated by the note's front matter, like its makers
    assert mentioned["Sparql"] == mentioned["IBM"] == "vendors/W3C/topic-rdf.md"


def test_a_new_note_reseeds_stored_notes_and_equals_a_full_rebuild(
    rebuilder: Rebuilder, db: Database, tmp_path: Path, equals_a_full_rebuild: FullRebuildCheck
) -> None:
    notes = dict(NOTES)
    vuetify = {
        "vendors/Vuetify/topic-vuetify.md": """---
created_by: John Leider
display_name: Vuetify
topic: vuetify
github_url: https://github.com/vuetifyjs/vuetify
---
Vuetify is a component framework for Vue.
"""
    }
    # a note that names Vuetify before Vuetify has a note of its own
    notes["vendors/HeroDevs/eol-vue.md"] += "\nMany apps build on Vuetify too.\n"
    root = write(tmp_path / "notes", notes)
    rebuilder.run(root)
    before, _ = graph(db, "HeroDevs")
    sure_before = confidence_of(db, "HeroDevs", "Vuetify")
    write(root, vuetify)
    report = rebuilder.run(root)
    assert report.documents_new == 1 and report.documents_reextracted == 1
    after, _ = graph(db, "HeroDevs")
    assert after.get("Vuetify") == "PRODUCT"
    equals_a_full_rebuild(root)
    nothing = rebuilder.run(root)
    assert nothing.up_to_date and nothing.documents_reextracted == 0
    # the stored note was read again with the new name as a seed: the model's guess
    # (if it made one) became a seeded mention, which is surer
    assert "Vuetify" not in before or sure_before < confidence_of(db, "HeroDevs", "Vuetify")


def test_a_new_note_reseeds_stored_notes_that_write_its_name_in_another_case(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    notes = dict(NOTES)
    kit = {
        "vendors/Vuetify/topic-vuetify-kit.md": """---
created_by: John Leider
display_name: Vuetify Kit
topic: vuetify-kit
---
Vuetify Kit is a set of components.
"""
    }
    # a stored note writes the name in another case before the name has a note
    notes["vendors/HeroDevs/eol-vue.md"] += "\nMany apps build on the VUETIFY kit too.\n"
    root = write(tmp_path / "notes", notes)
    rebuilder.run(root)
    write(root, kit)
    report = rebuilder.run(root)
    assert report.documents_new == 1 and report.documents_reextracted == 1
    after, _ = graph(db, "HeroDevs")
    assert after.get("Vuetify Kit") == "PRODUCT"  # named as its note declares it


def test_a_product_given_another_maker_rebuilds_the_graphs_that_name_it(
    rebuilder: Rebuilder, db: Database, tmp_path: Path, equals_a_full_rebuild: FullRebuildCheck
) -> None:
    linux = "---\ndisplay_name: Linux\ncreated_by: {maker}\ntopic: linux\n---\nA kernel.\n"
    notes = {
        "vendors/Oracle/eol-oracle-linux.md": "---\ntitle: Oracle Linux\n---\n"
        "> Oracle Linux is an operating system. Oracle Linux ships Linux 6 kernels.\n",
        "vendors/Kernel_Org/topic-linux.md": linux.format(maker="Oracle"),
    }
    root = write(tmp_path / "notes", notes)
    rebuilder.run(root)
    before, _ = graph(db, "Oracle")
    assert "Linux" not in before  # Oracle makes it, as far as the notes said: Oracle Linux
    # the Linux note now names another maker; Oracle's note is unchanged
    write(root, {"vendors/Kernel_Org/topic-linux.md": linux.format(maker="Linus Torvalds")})
    report = rebuilder.run(root)
    assert report.documents_changed == 1 and report.documents_reextracted == 1
    after, _ = graph(db, "Oracle")
    assert after.get("Linux") == "PRODUCT" and after.get("Oracle Linux") == "PRODUCT"
    equals_a_full_rebuild(root)


def test_a_new_note_writing_a_related_word_as_a_word_rebuilds_the_graphs_relating_it(
    rebuilder: Rebuilder, db: Database, tmp_path: Path, equals_a_full_rebuild: FullRebuildCheck
) -> None:
    """ "safari" is a name while no note writes it, or only as a name; a new note writing
    it in lower case makes it a word, and the graph relating it is rebuilt."""
    notes = {
        "vendors/Mozilla/topic-firefox.md": "---\ndisplay_name: Firefox\ncreated_by: Mozilla\n"
        "related: safari\ntopic: firefox\n---\nFirefox is a web browser.\n",
        "vendors/Apple/topic-webkit.md": "---\ndisplay_name: WebKit\ncreated_by: Apple\n"
        "topic: webkit\n---\nWebKit runs its Safari browser.\n",
    }
    root = write(tmp_path / "notes", notes)
    rebuilder.run(root)
    before, edges = graph(db, "Mozilla")
    assert before.get("Safari") == "PRODUCT" and ("Firefox", "RELATED_TO", "Safari") in edges
    park = "---\ndisplay_name: Kruger\ncreated_by: Someone\ntopic: kruger\n---\n"
    write(root, {"vendors/Someone/topic-kruger.md": park + "Kruger is a safari park.\n"})
    report = rebuilder.run(root)
    assert report.documents_new == 1 and report.documents_reextracted == 1
    after, edges = graph(db, "Mozilla")
    assert "Safari" not in after and not any(t == "Safari" for _, _, t in edges)
    equals_a_full_rebuild(root)


def test_a_product_page_and_a_topic_page_of_one_slug_are_one_product_with_its_lifecycle(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    notes = {
        "vendors/Linux_Foundation/eol-linux-kernel.md": "---\ntitle: Linux Kernel\n"
        'permalink: /linux\nreleases:\n  - releaseCycle: "6.6"\n    releaseDate: 2023-10-30\n'
        "    eol: 2026-12-01\n---\n> The Linux Kernel runs Linux systems.\n",
        "vendors/Linus_Torvalds/topic-linux.md": "---\ndisplay_name: Linux\n"
        "created_by: Linus Torvalds\ntopic: linux\n---\nLinux is a kernel.\n",
    }
    rebuilder.run(write(tmp_path / "notes", notes))
    foundation, _ = graph(db, "Linux Foundation")
    torvalds, _ = graph(db, "Linus Torvalds")
    # one product by its shorter name in every graph, the other name an alias
    assert foundation.get("Linux") == torvalds.get("Linux") == "PRODUCT"
    assert "Linux Kernel" not in foundation
    with db.connect() as conn:
        linked = conn.execute(
            "SELECT lp.product, e.name, e.aliases FROM lifecycle_products lp "
            "JOIN entities e ON e.id = lp.entity_id"
        ).fetchall()
    # its lifecycle is still the product's, through the entity its page's title names
    assert [(r["product"], r["name"]) for r in linked] == [("Linux Kernel", "Linux")]
    assert "Linux Kernel" in linked[0]["aliases"]


def test_another_graph_builder_rebuilds_graphs_without_extracting(
    rebuilder: Rebuilder, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import extraction.graph.build as graph_builder

    root = write(tmp_path / "notes", NOTES)
    rebuilder.run(root)
    kept = snapshot(db)
    monkeypatch.setattr(graph_builder, "GRAPH_VERSION", "next")
    report = rebuilder.run(root)
    assert not report.up_to_date and report.vendors_rebuilt == 4
    assert report.chunks_extracted == 0 and report.chunks_embedded == 0
    assert report.documents_new == report.documents_changed == 0
    assert snapshot(db) == kept
    assert rebuilder.run(root).up_to_date


ODD = {
    "vendors/Odd/topic-list.md": "---\ndisplay_name: [Zorblax, Beta]\ncreated_by: [Ann Lee]\n"
    "topic: zorblax\n---\nZorblax is a tool.\n",
    "vendors/Odd/topic-long.md": "---\ndisplay_name: Gamma\ncreated_by: "
    + "word " * 70
    + "\ntopic: gamma\nrelated: ''\n---\nGamma.\n",
    "vendors/Odd/topic-script.md": "---\ndisplay_name: 東京ツール\ncreated_by: 山田太郎\n"
    "topic: tokyo\n---\n東京ツール は ツール です。\n",
    "vendors/Mono/topic-mono.md": "---\ndisplay_name: Mono\ncreated_by: Mono\n"
    "github_url: https://github.com/mono/mono\ntopic: mono\n---\nMono is by Mono.\n",
    "vendors/Loop/eol-a.md": "---\ntitle: Alef\npermalink: /alef\n---\n"
    "Alef is a fork of Bet. Bet is a fork of Alef.\n",
}


def test_odd_front_matter_is_reported_and_loses_nothing(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    root = write(tmp_path / "notes", NOTES)
    rebuilder.run(root)
    kept = graph(db, "Dan Abramov")
    report = rebuilder.run(write(root, ODD))
    kinds = {(Path(p.path).name, p.kind) for p in report.problems}
    assert ("topic-list.md", "front_matter_shape") in kinds
    assert ("topic-long.md", "front_matter_shape") in kinds
    assert ("topic-mono.md", "subject_is_vendor") in kinds
    assert graph(db, "Dan Abramov") == kept  # other vendors untouched
    odd, _ = graph(db, "Odd")
    assert odd.get("Zorblax") == "PRODUCT" and odd.get("Ann Lee") == "PERSON"
    assert odd.get("東京ツール") == "PRODUCT" and odd.get("山田太郎") is not None
    mono, mono_edges = graph(db, "Mono")
    assert set(mono) >= {"Mono"} and ("Mono", "PRODUCES", "Mono") in mono_edges
    _, loop = graph(db, "Loop")
    based = {(s, t) for s, r, t in loop if r == "BASED_ON"}
    assert not ({("Alef", "Bet"), ("Bet", "Alef")} <= based)  # never a circle


BAD = {
    # one "sentence" of 5,000 tokens: a list the parser cannot split
    "vendors/Bad/eol-long.md": "---\ntitle: Longo\n---\nLongo is based on "
    + ", ".join(["Drupal"] * 2500)
    + ".\n\nLongo is a fork of Drupal.\n",
    "vendors/Bad/eol-table.md": "---\ntitle: Tabula\n---\n| Version | Based on |\n|---|---|\n"
    + "".join(f"| {v} | Drupal {v} |\n" for v in range(1, 40)),
    "vendors/Bad/eol-self.md": "---\ntitle: Selfie\n---\nSelfie is based on Selfie.\n",
    "vendors/Bad/eol-alef.md": "---\ntitle: Alefo\n---\nAlefo is based on Beto.\n",
    "vendors/Bad/eol-beto.md": "---\ntitle: Beto\n---\nBeto is based on Alefo.\n",
    "vendors/Dries/eol-drupal.md": "---\ntitle: Drupal\n---\nDrupal is a CMS.\n",
}


def test_bad_input_is_read_and_nothing_stored_is_lost(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    root = write(tmp_path / "notes", NOTES)
    rebuilder.run(root)
    kept = graph(db, "Dan Abramov")
    report = rebuilder.run(write(root, BAD))
    assert graph(db, "Dan Abramov") == kept  # other vendors untouched
    entities, edges = graph(db, "Bad")
    # every note is stored, each product page made by its folder's vendor
    made = {t for s, r, t in edges if s == "Bad" and r == "PRODUCES"}
    assert made == {"Longo", "Tabula", "Selfie", "Alefo", "Beto"}
    based = {(s, t) for s, r, t in edges if r == "BASED_ON"}
    # the short sentence after the long one is read; the long one is no prose
    assert ("Longo", "Drupal") in based
    assert not any(s == t for s, t in based)  # "Selfie is based on Selfie": nothing
    # "Alefo based on Beto based on Alefo": one of the two is left out, and said so
    assert len({("Alefo", "Beto"), ("Beto", "Alefo")} & based) == 1
    assert any(p.kind == "circular_based_on" for p in report.problems)
    with db.connect() as conn:
        stored = conn.execute(
            "SELECT count(*) AS n FROM documents d JOIN chunks c ON c.document_id = d.id "
            "WHERE d.source_path LIKE 'vendors/Bad/%%'"
        ).fetchone()
    assert stored is not None and stored["n"] >= len(BAD)
    assert {"Longo", "Tabula", "Selfie", "Alefo", "Beto", "Drupal"} <= set(entities)


def test_a_copy_of_the_notes_elsewhere_gives_the_same_graph(
    rebuilder: Rebuilder,
    db: Database,
    tmp_path: Path,
    fresh_database: str,
    embedder: Any,
    extractor: Any,
) -> None:
    from sql.database import open_database
    from sql.settings import DatabaseSettings

    root = write(tmp_path / "a", NOTES)
    rebuilder.run(root)
    other = tmp_path / "b"
    shutil.copytree(root, other)
    full = open_database(DatabaseSettings(database_url=fresh_database))
    Rebuilder(full, embedder=embedder, extractor=extractor).run(other)
    assert snapshot(db) == snapshot(full)


GRAPH_ROWS = {
    "entities": "SELECT id - %(b)s AS id, vendor_id, name, normalized_name, type, aliases, "
    "confidence, mention_count, snippet FROM entities ORDER BY id",
    "mentions": "SELECT entity_id - %(b)s AS e, chunk_id, start_char, end_char, text "
    "FROM entity_mentions ORDER BY 1, 2, 3, 4",
    "relationships": "SELECT vendor_id, source_id - %(b)s AS s, target_id - %(b)s AS t, type, "
    "confidence, evidence_chunk_id, evidence_sentence, metadata FROM relationships ORDER BY id",
    "vendors": "SELECT id, name, aliases, document_count, chunk_count, entity_count, "
    "relationship_count FROM vendors ORDER BY id",
}


def graph_rows(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the graph tables and the vendors' counts, entity ids counted from
    the build's first (each rebuild of a graph allocates new ones)."""
    with db.connect() as conn:
        row = conn.execute("SELECT min(id) AS base FROM entities").fetchone()
        base = {"b": row["base"] if row else 0}
        return {
            table: [tuple(r.values()) for r in conn.execute(query, base)]
            for table, query in GRAPH_ROWS.items()
        }


def test_vendors_rebuilt_together_are_the_rows_one_at_a_time_gives(
    rebuilder: Rebuilder, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Publishing reads and writes many vendors' graphs per statement; the tables are
    the same row for row (entity ids included) as one vendor at a time."""
    import extraction.graph.build as graph_builder
    import extraction.rebuild.vendor_graphs as vendor_graphs

    root = write(tmp_path / "notes", NOTES)
    rebuilder.run(root)
    rows = {}
    for size in (1, 3, 100):
        monkeypatch.setattr(graph_builder, "GRAPH_VERSION", f"batches of {size}")
        monkeypatch.setattr(vendor_graphs, "VENDORS_PER_BATCH", size)
        report = rebuilder.run(root)
        assert report.vendors_rebuilt == 4 and report.chunks_extracted == 0
        rows[size] = graph_rows(db)
    assert rows[1]["entities"] and rows[1]["relationships"] and rows[1]["mentions"]
    assert rows[1] == rows[3] == rows[100]
