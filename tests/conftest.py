"""Shared fixtures: a real PostgreSQL with pgvector, one fresh database per test.

Without ``TEST_DATABASE_URL`` an embedded PostgreSQL is started in a temporary
directory for the session and deleted afterwards. A template database is
migrated once; each test gets ``CREATE DATABASE ... TEMPLATE`` of it, which is
fast and leaves no state behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from sql.database import Database, open_database
from sql.settings import DatabaseSettings

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "vendor_notes"
TEMPLATE = "kb_test_template"


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[str]:
    """Connection string of a maintenance database on a server we may create databases in."""
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        yield url
        return
    from sql.embedded import start_embedded, stop_embedded

    root = Path(tempfile.mkdtemp(prefix="kb-test-pg-"))
    pgdata = root / "pgdata"
    try:
        yield start_embedded(pgdata, stop_at_exit=True)
    finally:
        stop_embedded(pgdata)
        shutil.rmtree(root, ignore_errors=True)


def _admin_execute(admin: str, statement: pgsql.Composable) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(statement)


@pytest.fixture(scope="session")
def template_db(pg_admin: str) -> str:
    _admin_execute(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(TEMPLATE)),
    )
    _admin_execute(pg_admin, pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(TEMPLATE)))
    settings = DatabaseSettings(database_url=make_conninfo(pg_admin, dbname=TEMPLATE))
    open_database(settings)
    return TEMPLATE


@pytest.fixture()
def fresh_database(pg_admin: str) -> Iterator[str]:
    """Name of a new, completely empty database (no extensions, no schema)."""
    name = f"kb_test_{uuid.uuid4().hex[:12]}"
    _admin_execute(pg_admin, pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    yield make_conninfo(pg_admin, dbname=name)
    _admin_execute(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)),
    )


@pytest.fixture()
def db(pg_admin: str, template_db: str) -> Iterator[Database]:
    """A migrated, empty knowledge base of its own."""
    name = f"kb_test_{uuid.uuid4().hex[:12]}"
    _admin_execute(
        pg_admin,
        pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(name), pgsql.Identifier(template_db)
        ),
    )
    conninfo = make_conninfo(pg_admin, dbname=name)
    yield open_database(DatabaseSettings(database_url=conninfo))
    _admin_execute(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)),
    )


@pytest.fixture(scope="session")
def embedder() -> Any:
    from search.embedder import Embedder, model_info

    return Embedder(model_info())


@pytest.fixture(scope="session")
def extractor() -> Any:
    from extraction.nlp import Extractor

    return Extractor.load()


@pytest.fixture()
def sample_copy(tmp_path: Path) -> Path:
    """A writable copy of a few vendors of the bundled sample corpus."""
    dest = tmp_path / "notes"
    shutil.copytree(SAMPLE, dest)
    return dest


@pytest.fixture(scope="session")
def sample_kb(pg_admin: str, template_db: str, embedder: Any, extractor: Any) -> Database:
    """The bundled sample corpus built once by the real rebuild; treat it as read-only."""
    from extraction.pipeline import Rebuilder

    name = "kb_test_sample"
    _admin_execute(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)),
    )
    _admin_execute(
        pg_admin,
        pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(name), pgsql.Identifier(template_db)
        ),
    )
    db = open_database(DatabaseSettings(database_url=make_conninfo(pg_admin, dbname=name)))
    Rebuilder(db, embedder=embedder, extractor=extractor).run(SAMPLE)
    return db


@pytest.fixture(scope="session")
def rerank_stand_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local cross-encoder folder of ms-marco-MiniLM-L-6-v2's architecture (the
    packaged MiniLM-L6 encoder, untrained head): real loading and inference."""
    from bench.rerank_stand_in import build_stand_in

    return build_stand_in(tmp_path_factory.mktemp("rerank") / "minilm-cross-encoder")
