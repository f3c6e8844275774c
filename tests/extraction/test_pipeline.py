"""The rebuild against a real PostgreSQL with the real models."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from extraction.rebuild.pipeline import Rebuilder
from sql.database import Database
from sql.errors import ModelMismatch
from tests.fixtures.corpus import GLOBEX, snapshot, write_corpus


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "notes")


@pytest.fixture()
def rebuilder(db: Database, embedder: Any, extractor: Any) -> Rebuilder:
    return Rebuilder(db, embedder=embedder, extractor=extractor)


def test_full_build_loads_chunks_graph_and_reports(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    report = rebuilder.run(corpus)
    assert report.build_id is not None
    assert report.documents_new == 5  # 4 notes + the latin-1 one; the binary file is skipped
    kinds = {(p.path.rsplit("/", 1)[-1], p.kind) for p in report.problems}
    assert ("broken.md", "binary") in kinds
    assert ("latin.md", "not_utf8") in kinds
    assert any(p.kind == "duplicate_vendor" for p in report.problems)
    with db.connect() as conn:
        vendors = conn.execute(
            "SELECT name, aliases, document_count FROM vendors ORDER BY name"
        ).fetchall()
        # "Acme" and "ACME Inc." folders are one vendor; the larger folder names it
        assert [(v["name"], v["aliases"], v["document_count"]) for v in vendors] == [
            ("Acme", ["ACME Inc."], 3),
            ("Globex", [], 2),
        ]
        row = conn.execute(
            "SELECT count(*) AS n, min(vector_dims(embedding)) AS d, "
            "bool_and(content LIKE context_header || '%%') AS headed FROM chunks"
        ).fetchone()
        assert row is not None and row["n"] >= 5 and row["d"] == 384 and row["headed"]
        tsv = conn.execute(
            "SELECT count(*) AS n FROM chunks "
            "WHERE tsv @@ plainto_tsquery('english', 'roadrunner sled')"
        ).fetchone()
        assert tsv is not None and tsv["n"] >= 1
        # every mention points into its chunk's text at the entity's surface form
        bad = conn.execute(
            "SELECT m.text, substr(c.content, m.start_char + 1, m.end_char - m.start_char) AS at "
            "FROM entity_mentions m JOIN chunks c ON c.id = m.chunk_id "
            "WHERE substr(c.content, m.start_char + 1, m.end_char - m.start_char) <> m.text"
        ).fetchall()
        assert bad == []
        rels = conn.execute(
            "SELECT s.name AS s, r.type, t.name AS t, r.confidence, r.evidence_sentence "
            "FROM relationships r JOIN entities s ON s.id = r.source_id "
            "JOIN entities t ON t.id = r.target_id WHERE r.type <> 'MENTIONED_WITH'"
        ).fetchall()
        assert rels, "no typed relationship extracted from the sample notes"
        assert all(r["evidence_sentence"] for r in rels)
        build = conn.execute("SELECT status, models FROM graph_builds").fetchone()
        assert build is not None and build["status"] == "complete"
        assert build["models"]["embedding"] == "sentence-transformers/all-MiniLM-L6-v2 [int8]"
    assert report.entities_by_type and report.totals["chunks"] >= 5
    assert set(report.stage_seconds) >= {"scan", "parse", "chunk", "embed", "extract", "publish"}


def test_no_change_run_does_nothing(rebuilder: Rebuilder, db: Database, corpus: Path) -> None:
    rebuilder.run(corpus)
    before = snapshot(db)
    report = rebuilder.run(corpus)
    assert report.up_to_date and report.build_id is None
    assert report.chunks_embedded == 0 and report.chunks_extracted == 0
    assert snapshot(db) == before


def test_changed_file_recomputes_only_new_text(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    rebuilder.run(corpus)
    note = corpus / "vendors/Globex/overview.md"
    note.write_text(GLOBEX + "\nGlobex acquired Soylent Corporation in 2020.\n", encoding="utf-8")
    report = rebuilder.run(corpus)
    assert report.documents_changed == 1 and report.documents_new == 0
    assert report.documents_unchanged == 4
    # only the changed note's chunks can need new work, and only those whose text changed
    assert 1 <= report.chunks_embedded <= 2
    assert report.vendors_rebuilt == 1
    with db.connect() as conn:
        n = conn.execute(
            "SELECT count(*) AS n FROM chunks WHERE content LIKE '%%Soylent%%'"
        ).fetchone()
        assert n is not None and n["n"] == 1


def test_a_new_extractor_version_extracts_every_note_again_without_embedding(
    rebuilder: Rebuilder, db: Database, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import extraction.rebuild.prepare as preparing

    first = rebuilder.run(corpus)
    chunk_ids = "SELECT id, extraction_key FROM chunks ORDER BY id"
    with db.connect() as conn:
        before = [(r["id"], r["extraction_key"]) for r in conn.execute(chunk_ids)]
    monkeypatch.setattr(preparing, "EXTRACTOR_VERSION", "next")
    report = rebuilder.run(corpus)
    assert not report.up_to_date
    with db.connect() as conn:
        after = [(r["id"], r["extraction_key"]) for r in conn.execute(chunk_ids)]
    # the same text keeps its chunk rows (ids a client holds stay valid) with new keys
    assert [i for i, _ in after] == [i for i, _ in before]
    assert all(a != b for (_, a), (_, b) in zip(after, before, strict=True))
    assert report.chunks_written == 0
    assert report.documents_reextracted == first.documents_new and report.documents_new == 0
    assert report.documents_changed == 0
    assert report.chunks_embedded == 0  # the text did not change: vectors come from the cache
    assert report.chunks_extracted == first.chunks_extracted
    with db.connect() as conn:
        versions = {r["extractor_version"] for r in conn.execute("SELECT * FROM documents")}
    assert versions == {"next"}
    assert rebuilder.run(corpus).up_to_date


def test_deleted_file_takes_its_chunks_mentions_and_orphans(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    rebuilder.run(corpus)
    with db.connect() as conn:
        had = conn.execute(
            "SELECT count(*) AS n FROM entities WHERE normalized_name LIKE 'hank scorpio%%'"
        ).fetchone()
    assert had is not None and had["n"] >= 1
    (corpus / "vendors/Globex/overview.md").unlink()
    (corpus / "vendors/Globex/latin.md").unlink()
    report = rebuilder.run(corpus)
    assert report.documents_deleted == 2
    with db.connect() as conn:
        assert conn.execute(
            "SELECT count(*) AS n FROM vendors WHERE name = 'Globex'"
        ).fetchone() == {"n": 0}
        orphans = conn.execute(
            "SELECT count(*) AS n FROM entities WHERE normalized_name LIKE 'hank scorpio%%'"
        ).fetchone()
        assert orphans == {"n": 0}
        dangling = conn.execute(
            "SELECT count(*) AS n FROM entity_mentions m LEFT JOIN chunks c ON c.id = m.chunk_id "
            "WHERE c.id IS NULL"
        ).fetchone()
        assert dangling == {"n": 0}
        paths = [r["source_path"] for r in conn.execute("SELECT source_path FROM documents")]
    assert all(not p.startswith("vendors/Globex") for p in paths)


def test_ingest_adds_without_deleting(
    rebuilder: Rebuilder, db: Database, corpus: Path, tmp_path: Path
) -> None:
    rebuilder.run(corpus)
    other = tmp_path / "other"
    (other / "vendors" / "Initech").mkdir(parents=True)
    (other / "vendors" / "Initech" / "tps.md").write_text(
        "# TPS reports\n\nInitech is based in Austin.\n"
    )
    report = rebuilder.run(other, delete_missing=False)
    assert report.documents_new == 1 and report.documents_deleted == 0
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) AS n FROM documents").fetchone() == {"n": 6}


def test_vendor_folder_scope_only_syncs_that_vendor(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    rebuilder.run(corpus)
    (corpus / "vendors/Acme/pricing.md").unlink()
    report = rebuilder.run(corpus / "vendors" / "Acme")
    # Globex is outside the scanned scope: untouched; Acme's deleted note is gone
    assert report.documents_deleted == 1
    with db.connect() as conn:
        paths = {r["source_path"] for r in conn.execute("SELECT source_path FROM documents")}
    assert "vendors/Globex/overview.md" in paths
    assert "vendors/Acme/pricing.md" not in paths


def test_another_embedding_model_is_refused_and_nothing_changes(
    rebuilder: Rebuilder, db: Database, corpus: Path, tmp_path: Path
) -> None:
    from search.embedder import EmbeddingSettings
    from search.model_files import packaged_model_path

    rebuilder.run(corpus)
    before = snapshot(db)
    other_model = tmp_path / "other-model"
    shutil.copytree(packaged_model_path(), other_model)
    cfg = other_model / "config.json"
    cfg.write_text(cfg.read_text().replace("{", '{"_note": "another model",', 1))
    other = Rebuilder(db, embedding_settings=EmbeddingSettings(model_path=other_model))
    (corpus / "vendors/Acme/new.md").write_text("# New\n\nAcme opened an office in Paris.\n")
    with pytest.raises(ModelMismatch, match="configured model is 'other-model@"):
        other.run(corpus)
    assert snapshot(db) == before


def test_another_precision_embeds_every_note_again(
    rebuilder: Rebuilder, db: Database, corpus: Path, extractor: Any
) -> None:
    """int8 and fp32 vectors of one model are one vector space, so a knowledge base of
    one is accepted by the other; a rebuild at the other precision embeds every note
    again (chunk rows rewritten), so the knowledge base never mixes the two."""
    from search.embedder import EmbeddingSettings
    from sql.database import bound_model

    first = rebuilder.run(corpus)
    assert rebuilder.vectors.endswith("[int8]") and first.vectors_replaced is None
    with db.connect() as conn:
        bound = bound_model(conn)
        chunks = conn.execute("SELECT count(*) AS n FROM chunks").fetchone()["n"]
    assert bound is not None and bound.vectors == rebuilder.vectors
    fp32 = Rebuilder(
        db, embedding_settings=EmbeddingSettings(KB_EMBEDDING_PRECISION="fp32"), extractor=extractor
    )
    report = fp32.run(corpus)
    assert report.vectors_replaced == rebuilder.vectors
    assert report.documents_unchanged == 0 and report.chunks_embedded == report.chunks_written
    assert report.chunks_written == chunks and report.chunks_extracted == 0  # extractions cached
    with db.connect() as conn:
        bound = bound_model(conn)
        cached = {r["model"] for r in conn.execute("SELECT DISTINCT model FROM embedding_cache")}
    assert bound is not None and bound.vectors == bound.name == fp32.vectors
    assert cached == {fp32.vectors}
    assert fp32.run(corpus).up_to_date


def test_empty_folder_publishes_nothing_and_says_so(
    rebuilder: Rebuilder, db: Database, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    report = rebuilder.run(empty)
    assert report.up_to_date
    assert [p.kind for p in report.problems] == ["empty"]


def test_empty_folder_never_deletes_the_knowledge_base(
    rebuilder: Rebuilder, db: Database, corpus: Path, tmp_path: Path
) -> None:
    rebuilder.run(corpus)
    before = snapshot(db)
    empty = tmp_path / "vendors"
    empty.mkdir()
    report = rebuilder.run(empty)
    assert report.documents_deleted == 0 and report.up_to_date
    assert snapshot(db) == before


def test_held_notes_are_neither_read_nor_deleted(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    rebuilder.run(corpus)
    before = snapshot(db)
    (corpus / "vendors/Globex/overview.md").write_text(GLOBEX + "\nHalf a sent", encoding="utf-8")
    (corpus / "vendors/Acme/pricing.md").unlink()
    held = {"vendors/Globex/overview.md", "vendors/Acme/pricing.md"}
    report = rebuilder.run(corpus, hold=held)
    assert report.up_to_date and snapshot(db) == before
    assert {(p.path, p.kind) for p in report.problems} >= {(h, "being_written") for h in held}
    report = rebuilder.run(corpus)
    assert report.notes["changed"] == ["vendors/Globex/overview.md"]
    assert report.notes["deleted"] == ["vendors/Acme/pricing.md"]


def test_notes_get_their_card_and_card_vector(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    first = rebuilder.run(corpus)
    assert first.cards_embedded == first.documents_new  # one card vector per note
    cards = (
        "SELECT d.source_path, d.card_hash, d.card_embedding IS NOT NULL AS embedded, c.card "
        "FROM documents d JOIN chunks c ON c.document_id = d.id "
        "WHERE c.chunk_index = 0 ORDER BY d.source_path"
    )
    with db.connect() as conn:
        rows = {r["source_path"]: r for r in conn.execute(cards)}
    assert all(r["embedded"] and r["card_hash"] for r in rows.values())
    assert rows["vendors/Acme/rocket.md"]["card"] == (
        "Acme Rocket Platform. product. Acme Corporation is headquartered in Denver, Colorado. "
        "Acme Corporation was founded by Jane Doe in 1999. John Smith is the chief executive "
        "officer of Acme Corporation"
    )

    # front matter alone changes: the card follows, the text's work stays cached
    note = corpus / "vendors/Globex/overview.md"
    note.write_text(
        GLOBEX.replace(
            "title: Globex overview", "title: Globex overview\naliases: heat-pump-maker"
        ),
        encoding="utf-8",
    )
    report = rebuilder.run(corpus)
    assert report.cards_embedded == 1 and report.chunks_embedded == 0
    assert report.chunks_extracted == 0
    with db.connect() as conn:
        after = {r["source_path"]: r for r in conn.execute(cards)}
        found = conn.execute(
            "SELECT count(*) AS n FROM chunks WHERE tsv @@ plainto_tsquery('english', 'heat pump')"
        ).fetchone()
    assert "heat pump maker" in after["vendors/Globex/overview.md"]["card"]
    assert (
        after["vendors/Globex/overview.md"]["card_hash"]
        != (rows["vendors/Globex/overview.md"]["card_hash"])
    )
    assert found is not None and found["n"] >= 1
    assert rebuilder.run(corpus).up_to_date


def test_a_knowledge_base_from_before_cards_gets_them_without_extracting_again(
    rebuilder: Rebuilder, db: Database, corpus: Path
) -> None:
    rebuilder.run(corpus)
    with db.connect() as conn:
        # as migration 0016 leaves a knowledge base built before cards
        conn.execute("UPDATE chunks SET card = ''")
        conn.execute("UPDATE documents SET card_hash = NULL, card_embedding = NULL")
        conn.commit()
        ids = [r["id"] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    report = rebuilder.run(corpus)
    assert not report.up_to_date
    assert report.documents_reextracted == 5 and report.chunks_extracted == 0
    assert report.chunks_embedded == 0  # chunk text unchanged: vectors from the cache
    with db.connect() as conn:
        missing = conn.execute(
            "SELECT count(*) FILTER (WHERE d.card_embedding IS NULL) AS docs, "
            "count(*) FILTER (WHERE c.card = '') AS chunks "
            "FROM documents d JOIN chunks c ON c.document_id = d.id"
        ).fetchone()
        # the chunks are written again with their card (new rows, new ids)
        now = [r["id"] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    assert missing == {"docs": 0, "chunks": 0}
    assert len(now) == len(ids)
    assert rebuilder.run(corpus).up_to_date
