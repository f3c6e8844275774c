"""Connecting, pgvector checks, model binding and the embedded server's failures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql
from pydantic import ValidationError

from sql.database import bind_embedding_model, bound_model, open_database, redact
from sql.errors import DatabaseUnavailable, EmbeddedServerError, ModelMismatch, PgvectorMissing
from sql.settings import DatabaseSettings


def test_model_binding_fixes_dimension_and_refuses_another_model(db: Any) -> None:
    with db.connect() as conn:
        assert bound_model(conn) is None
        bind_embedding_model(conn, "model-a", 384)
        bind_embedding_model(conn, "model-a", 384)  # same model: fine
        typ = conn.execute(
            "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute "
            "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert typ is not None and typ["t"] == "vector(384)"
        with pytest.raises(
            ModelMismatch, match=r"384-d vectors from the embedding model 'model-a'"
        ):
            bind_embedding_model(conn, "model-b", 768)
        with pytest.raises(ModelMismatch):
            bind_embedding_model(conn, "model-b", 384)
        assert bound_model(conn) is not None


def test_unreachable_database_names_the_setting_without_password() -> None:
    settings = DatabaseSettings(
        database_url="postgresql://kb:hunter2@127.0.0.1:1/kb", connect_timeout=2
    )
    with pytest.raises(DatabaseUnavailable) as info:
        open_database(settings)
    message = str(info.value)
    assert "DATABASE_URL" in message
    assert "hunter2" not in message
    assert "***" in message


def test_database_without_pgvector_is_refused(fresh_database: str) -> None:
    # PostgreSQL 18's extension_control_path lets this real server hide its
    # extensions from one database: to that database, pgvector is not installed.
    # (The server may run as another user: the folder must be world-readable.)
    empty = Path(tempfile.mkdtemp(prefix="kb-no-ext-"))
    (empty / "extension").mkdir()
    empty.chmod(0o755)
    (empty / "extension").chmod(0o755)
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        dbname = conn.info.dbname
        try:
            conn.execute(
                pgsql.SQL("ALTER DATABASE {} SET extension_control_path = {}").format(
                    pgsql.Identifier(dbname), pgsql.Literal(str(empty))
                )
            )
        except psycopg.errors.UndefinedObject:
            pytest.skip("server older than PostgreSQL 18: no extension_control_path")
    with pytest.raises(PgvectorMissing, match="install pgvector"):
        open_database(DatabaseSettings(database_url=fresh_database))


def test_bad_database_url_is_a_settings_error() -> None:
    with pytest.raises(ValidationError, match="postgresql://"):
        DatabaseSettings(database_url="mysql://nope")
    assert DatabaseSettings(database_url="  ").database_url is None


def test_redact_hides_passwords() -> None:
    assert redact("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert "pw" not in redact("host=h password=pw")


def test_unwritable_embedded_directory_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        target = Path("/proc/kb-cannot-exist/pgdata")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "sub" / "pgdata"
    with pytest.raises(EmbeddedServerError, match="KB_PGDATA"):
        open_database(DatabaseSettings(pgdata=target))


def test_vector_roundtrip_through_adapter(db: Any) -> None:
    import numpy as np

    with db.connect() as conn:
        bind_embedding_model(conn, "m", 3)
        row = conn.execute(
            pgsql.SQL("SELECT %s::vector(3) <=> %s::vector(3) AS d"),
            (np.array([1, 0, 0], dtype=np.float32), np.array([0, 1, 0], dtype=np.float32)),
        ).fetchone()
        assert row is not None and abs(row["d"] - 1.0) < 1e-6


def test_pgdata_that_is_a_file_is_refused_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me")
    before = victim.stat()
    with pytest.raises(EmbeddedServerError, match="is a file, not a folder"):
        open_database(DatabaseSettings(pgdata=victim))
    after = victim.stat()
    assert victim.read_text() == "keep me"
    assert (after.st_uid, after.st_mode) == (before.st_uid, before.st_mode)


def test_pgdata_folder_with_other_files_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "report.md").write_text("mine")
    with pytest.raises(EmbeddedServerError, match="not a PostgreSQL data directory"):
        open_database(DatabaseSettings(pgdata=folder))
    assert (folder / "report.md").read_text() == "mine"


def test_replicas_starting_at_once_on_a_new_database_all_come_up(fresh_database: str) -> None:
    """Several servers or workers pointed at a new database at the same moment:
    one creates the extensions and the schema, the others wait and find it done."""
    import threading

    errors: list[BaseException] = []

    def start() -> None:
        try:
            open_database(DatabaseSettings(database_url=fresh_database))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(fresh_database) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert len(versions) == len(set(versions)) > 10
