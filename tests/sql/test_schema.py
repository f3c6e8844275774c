"""schema.sql and the migrations must describe the same database."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql
from psycopg.rows import dict_row

from sql.database import ensure_extensions, migrate, migrate_from_history
from sql.queries import migrations, parse_named_blocks, queries

CATALOG = {
    "columns": """
        SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
               is_generated, generation_expression
        FROM information_schema.columns WHERE table_schema = 'public'
        ORDER BY table_name, column_name""",
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
        ORDER BY tablename, indexname""",
    "constraints": """
        SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
        ORDER BY 1, 2""",
    "extensions": "SELECT extname FROM pg_extension ORDER BY 1",
    # the functions and triggers that keep BM25 statistics, build notifications and
    # rate limits right (not those of extensions)
    "functions": """
        SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
        ORDER BY 1, 2""",
    "triggers": """
        SELECT tgrelid::regclass::text AS tbl, tgname, pg_get_triggerdef(oid) AS def
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2""",
    "reloptions": """
        SELECT relname, reloptions FROM pg_class
        WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL
        ORDER BY 1""",
    "storage": """
        SELECT a.attrelid::regclass::text AS tbl, a.attname, a.attstorage
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
          AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY 1, 2""",
}


def _snapshot(conninfo: str) -> dict[str, list[dict[str, Any]]]:
    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        return {name: conn.execute(q).fetchall() for name, q in CATALOG.items()}  # type: ignore[call-overload]


def test_schema_file_equals_migration_history(fresh_database: str, db: Any) -> None:
    # db was built from schema.sql (template); fresh_database replays migrations
    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        ensure_extensions(conn)
        migrate_from_history(conn)
    from_schema = _snapshot(db.conninfo)
    from_history = _snapshot(fresh_database)
    assert from_schema["columns"], "schema produced no tables"
    assert {f["proname"] for f in from_schema["functions"]} >= {"kb_admit", "chunk_terms_apply"}
    assert from_schema["triggers"], "schema produced no triggers"
    for part in CATALOG:
        assert from_schema[part] == from_history[part], f"{part} differ"


def test_migrate_is_idempotent_and_records_versions(db: Any) -> None:
    with psycopg.connect(db.conninfo, autocommit=True, row_factory=dict_row) as conn:
        assert migrate(conn) == []
        versions = [r["version"] for r in conn.execute(queries()["applied_migrations"])]
    assert versions == [v for v, _ in migrations()]


def test_existing_tables_without_history_are_refused(fresh_database: str) -> None:
    from sql.errors import MigrationError

    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        ensure_extensions(conn)
        conn.execute("CREATE TABLE documents (id int)")
        with pytest.raises(MigrationError, match="no migration history"):
            migrate(conn)


def test_named_blocks_parse_and_reject_duplicates() -> None:
    assert parse_named_blocks("-- a --\nSELECT 1;\n-- b --\nSELECT 2;") == {
        "a": "SELECT 1;",
        "b": "SELECT 2;",
    }
    with pytest.raises(ValueError, match="duplicate"):
        parse_named_blocks("-- a --\nSELECT 1;\n-- a --\nSELECT 2;")
    assert "upsert_document" in queries()


def _knowledge_base_before(
    conn: psycopg.Connection[Any], version: str, texts: list[str], vectors: Any
) -> None:
    """A knowledge base as the migrations before ``version`` left it: the model
    bound (vector(384), HNSW index) and one note with a chunk per text and vector."""
    from pgvector.psycopg import register_vector

    q = queries()
    ensure_extensions(conn)
    with conn.transaction():
        conn.execute(q["create_migrations_table"])
        for name, statement in migrations():
            if name < version:
                conn.execute(statement)
                conn.execute(q["record_migration"], {"version": name})
    register_vector(conn)
    conn.execute("ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(384)")
    # the chunks' index as the first binding made it (notes got vectors in 0016)
    conn.execute(
        "CREATE INDEX chunks_embedding_hnsw ON chunks "
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
    )
    conn.execute(
        "INSERT INTO kb_meta (key, value) VALUES ('embedding_model', "
        """'{"name": "model-a", "dimension": 384}')"""
    )
    conn.execute(
        "INSERT INTO vendors (name, normalized_name) VALUES ('Acme', 'acme');"
        "INSERT INTO documents (source_path, vendor_id, title, content_hash) "
        "VALUES ('vendors/Acme/a.md', 1, 'A', 'h')"
    )
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO chunks (document_id, chunk_index, total_chunks, content, "
            "content_hash, token_count, extraction_key, embedding) "
            "VALUES (1, %s, %s, %s, %s, 10, 'k', %s)",
            [
                (i, len(texts), t, f"h{i}", v)
                for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
            ],
        )


def _out_of_line(conn: psycopg.Connection[Any], column: str) -> int:
    """Chunks whose ``column`` sits in the TOAST table."""
    row = conn.execute(
        pgsql.SQL(
            "SELECT count(*) AS n FROM chunks WHERE pg_column_toast_chunk_id({}) IS NOT NULL"
        ).format(pgsql.Identifier(column))
    ).fetchone()
    return int(row["n"]) if row else -1


def test_vectors_stored_out_of_line_move_into_their_rows(fresh_database: str) -> None:
    """Migration 0007 on a knowledge base whose vectors sit in the TOAST table (as
    pgvector stores them by default): afterwards every vector is in its row, the
    HNSW index is back, and binding a model keeps the storage."""
    import numpy as np

    from sql.database import bind_embedding_model

    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        vectors = np.random.default_rng(3).normal(size=(40, 384)).astype(np.float32)
        # as 0006 left it: the model bound, vectors stored out of line (EXTERNAL)
        _knowledge_base_before(conn, "0007", ["word " * 400] * 40, vectors)
        assert _out_of_line(conn, "embedding") == 40
        assert migrate(conn)[:2] == ["0007_embedding_in_row", "0008_content_in_row"]
        assert _out_of_line(conn, "embedding") == 0
        stored = conn.execute("SELECT embedding FROM chunks ORDER BY chunk_index").fetchall()
        assert np.allclose(np.array([r["embedding"].to_numpy() for r in stored]), vectors)
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw'"
        ).fetchone()
        assert index is not None and "hnsw" in index["indexdef"]
        storage = (
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'chunks'::regclass "
            "AND attname = 'embedding'"
        )
        assert conn.execute(storage).fetchone() == {"attstorage": "m"}

    # a new knowledge base: binding the model (a new column type) keeps MAIN
    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        ensure_extensions(conn)
        migrate(conn)
        bind_embedding_model(conn, "model-a", 384)
        assert conn.execute(storage).fetchone() == {"attstorage": "m"}


def test_chunk_text_stored_out_of_line_moves_into_its_row(fresh_database: str) -> None:
    """Migration 0008 on a knowledge base whose chunk text sits in the TOAST table
    (rows over PostgreSQL's default 2 kB target): afterwards every text is in its
    row, unchanged, and the indexes and term statistics still answer."""
    import numpy as np

    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        rng = np.random.default_rng(5)
        vectors = rng.normal(size=(30, 384)).astype(np.float32)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        # random words do not compress, so the row's text has to leave it
        texts = [
            " ".join("".join(rng.choice(letters, size=7)) for _ in range(220)) + " acmewidget"
            for _ in vectors
        ]
        _knowledge_base_before(conn, "0008", texts, vectors)
        terms_before = conn.execute("SELECT count(*) AS n FROM chunk_terms").fetchone()
        assert _out_of_line(conn, "content") == 30
        assert migrate(conn)[:1] == ["0008_content_in_row"]
        assert _out_of_line(conn, "content") == 0
        stored = conn.execute("SELECT content FROM chunks ORDER BY chunk_index").fetchall()
        assert [r["content"] for r in stored] == texts
        assert conn.execute("SELECT count(*) AS n FROM chunk_terms").fetchone() == terms_before
        conn.execute("SET enable_seqscan = off")
        found = conn.execute(
            "SELECT count(*) AS n FROM chunks WHERE tsv @@ to_tsquery('english', 'acmewidget')"
        ).fetchone()
        assert found == {"n": 30}
        nearest = conn.execute(
            "SELECT chunk_index FROM chunks ORDER BY embedding <=> %s LIMIT 1", (vectors[7],)
        ).fetchone()
        assert nearest == {"chunk_index": 7}
        clustered = conn.execute(
            "SELECT count(*) AS n FROM pg_index WHERE indrelid = 'chunks'::regclass "
            "AND indisclustered"
        ).fetchone()
        assert clustered == {"n": 0}
        reloptions = conn.execute(
            "SELECT reloptions FROM pg_class WHERE oid = 'chunks'::regclass"
        ).fetchone()
        assert reloptions == {"reloptions": ["toast_tuple_target=8160"]}


def test_note_cards_migration_keeps_the_full_text_and_binds_note_vectors(
    fresh_database: str,
) -> None:
    """Migration 0016 on a bound knowledge base: the chunks' full-text documents
    (made again with the card) hold the same lexemes, the term statistics still
    match them, and the notes' card vectors take the model's dimension and an HNSW
    index; such notes have no card vector yet."""
    import numpy as np

    with psycopg.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        vectors = np.random.default_rng(7).normal(size=(5, 384)).astype(np.float32)
        texts = [f"acmewidget part {i} of the rocket sled manual" for i in range(5)]
        _knowledge_base_before(conn, "0016", texts, vectors)
        lexemes = "SELECT id, tsv::text AS tsv FROM chunks ORDER BY id"
        before = conn.execute(lexemes).fetchall()
        postings = "SELECT lexeme, chunk_id, tf, dl FROM chunk_terms ORDER BY 1, 2"
        terms = conn.execute(postings).fetchall()
        assert migrate(conn) == ["0016_note_cards"]
        assert conn.execute(lexemes).fetchall() == before
        assert conn.execute(postings).fetchall() == terms
        column = conn.execute(
            "SELECT format_type(atttypid, atttypmod) AS type, attstorage FROM pg_attribute "
            "WHERE attrelid = 'documents'::regclass AND attname = 'card_embedding'"
        ).fetchone()
        assert column == {"type": "vector(384)", "attstorage": "m"}
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'documents_card_embedding_hnsw'"
        ).fetchone()
        assert index is not None and "hnsw" in index["indexdef"]
        assert conn.execute("SELECT card_hash, card_embedding FROM documents").fetchall() == [
            {"card_hash": None, "card_embedding": None}
        ]
        # a card's words now reach the chunk's full-text document and its statistics
        conn.execute("UPDATE chunks SET card = 'Roadrunner. rocket sled' WHERE chunk_index = 0")
        found = conn.execute(
            "SELECT c.chunk_index, t.tf FROM chunks c JOIN chunk_terms t ON t.chunk_id = c.id "
            "WHERE c.tsv @@ to_tsquery('english', 'roadrunner') AND t.lexeme = 'roadrunn'"
        ).fetchall()
        assert found == [{"chunk_index": 0, "tf": 1}]
