"""schema.sql and the migrations must describe the same database."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
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
