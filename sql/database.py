"""Opening the knowledge base: connection, extensions, migrations, model binding."""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import SecretStr

from sql.embedded import start_embedded
from sql.errors import (
    DatabaseUnavailable,
    MigrationError,
    ModelMismatch,
    PgvectorMissing,
)
from sql.queries import migrations, queries, schema_sql
from sql.settings import DatabaseSettings

MIN_PGVECTOR = (0, 8)
_MIGRATION_LOCK = 7_344_201  # advisory lock key: one migrator at a time


def redact(conninfo: str) -> str:
    """Connection string without its password, for messages and logs.

    >>> redact("postgresql://kb:s3cret@db.example:5432/kb")
    'postgresql://kb:***@db.example:5432/kb'
    >>> redact("host=db password=s3cret dbname=kb")
    'host=db password=*** dbname=kb'
    """
    out = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", conninfo)
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", out, flags=re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Database:
    """A reachable knowledge base with the current schema."""

    conninfo: str
    embedded_dir: Path | None
    connect_timeout: float = 10.0

    @property
    def description(self) -> str:
        if self.embedded_dir is not None:
            return f"embedded PostgreSQL in {self.embedded_dir}"
        return redact(self.conninfo)

    def connect(
        self, *, autocommit: bool = False, session: Session = ()
    ) -> psycopg.Connection[dict[str, Any]]:
        """A new connection with dict rows and the pgvector adapter, and
        ``session``'s settings for its whole life (see :func:`session_settings`)."""
        conn = _connect(self.conninfo, self.connect_timeout, autocommit=autocommit, session=session)
        _configure(conn, session)
        return conn

    def pool(
        self,
        *,
        min_size: int = 1,
        max_size: int = 4,
        autocommit: bool = False,
        session: Session = (),
        check: bool = True,
    ) -> ConnectionPool:
        """A pool whose connections have the pgvector adapter and ``session``'s
        settings (see :func:`session_settings`); waits until usable. ``check``
        tests each connection with a round trip before handing it out; without
        it, a caller must retry once on a connection that broke while idle."""
        pool = ConnectionPool(
            with_session(self.conninfo, session),
            min_size=min_size,
            max_size=max_size,
            kwargs={
                "row_factory": dict_row,
                "connect_timeout": int(self.connect_timeout),
                "autocommit": autocommit,
            },
            configure=lambda conn: _configure(conn, session),
            # a connection that broke while idle (server restarted) is replaced
            # before it is handed out, so callers recover by themselves
            check=ConnectionPool.check_connection if check else None,
            # a caller waiting for a connection gives up like a direct connect does,
            # instead of the pool's default 30 s
            timeout=self.connect_timeout,
            # background reconnection backs off exponentially (1, 2, 4, ... s); give
            # it up quickly so that, once the server is back, the next caller's own
            # attempt reconnects at once instead of waiting out a long backoff
            reconnect_timeout=2.0,
            open=False,
        )
        pool.open(wait=True, timeout=self.connect_timeout)
        return pool


ConnectionSource = Database | ConnectionPool | psycopg.Connection[Any]

Session = tuple[tuple[str, str], ...]
"""Server settings a connection keeps for its whole session: (name, value) pairs."""

# the session settings each open connection was started with (none: not listed)
_SESSIONS: weakref.WeakKeyDictionary[psycopg.Connection[Any], Session] = weakref.WeakKeyDictionary()


def startup_options(session: Session) -> str:
    """``session`` as libpq's ``options`` (``-c name=value`` each, given to the server
    when the connection starts: no statement, no round trip).

    >>> startup_options((("hnsw.ef_search", "100"), ("join_collapse_limit", "1")))
    '-c hnsw.ef_search=100 -c join_collapse_limit=1'
    """
    for name, value in session:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) or not re.fullmatch(
            r"[A-Za-z0-9_.]+", value
        ):
            raise ValueError(f"not a plain setting: {name}={value!r}")
    return " ".join(f"-c {name}={value}" for name, value in session)


def with_session(conninfo: str, session: Session) -> str:
    """``conninfo`` whose connections start with ``session`` (after any ``options``
    it already gives, which stay in force).

    >>> with_session("dbname=kb options='-c search_path=kb'", (("join_collapse_limit", "1"),))
    "dbname=kb options='-c search_path=kb -c join_collapse_limit=1'"
    """
    if not session:
        return conninfo
    given = conninfo_to_dict(conninfo).get("options")
    options = startup_options(session)
    return make_conninfo(conninfo, options=f"{given} {options}" if given else options)


def session_settings(conn: psycopg.Connection[Any]) -> Session:
    """The settings ``conn`` was started with by :meth:`Database.connect` or
    :meth:`Database.pool` (``session``): in force for every statement it runs,
    so callers that need exactly these can skip setting them. Empty for any other
    connection. Such a connection is kept for the work its settings are for
    (nothing here changes them afterwards)."""
    return _SESSIONS.get(conn, ())


def _configure(conn: psycopg.Connection[Any], session: Session) -> None:
    register_vector(conn)
    if session:
        _SESSIONS[conn] = session


@contextmanager
def connection(
    source: ConnectionSource, *, autocommit: bool = False, session: Session = ()
) -> Iterator[psycopg.Connection[Any]]:
    """A connection from a :class:`Database` (a new one, opened with ``autocommit``
    and ``session``), a pool, or the given open connection (both as they are)."""
    if isinstance(source, psycopg.Connection):
        yield source
    elif isinstance(source, ConnectionPool):
        with source.connection() as conn:
            yield conn
    else:
        with source.connect(autocommit=autocommit, session=session) as conn:
            yield conn


def _connect(
    conninfo: str, timeout: float, *, autocommit: bool = False, session: Session = ()
) -> psycopg.Connection[dict[str, Any]]:
    conninfo = with_session(conninfo, session)
    try:
        return psycopg.connect(
            conninfo,
            autocommit=autocommit,
            row_factory=dict_row,
            connect_timeout=max(1, int(timeout)),
        )
    except psycopg.OperationalError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailable(
            f"cannot connect to {redact(conninfo)}: {redact(first_line)}. "
            "Check DATABASE_URL, or unset it to use the embedded server."
        ) from None


def open_database(
    settings: DatabaseSettings | None = None, *, stop_embedded_at_exit: bool = False
) -> Database:
    """Connect (starting the embedded server if ``DATABASE_URL`` is unset),
    check pgvector and bring the schema up to date."""
    settings = settings or DatabaseSettings()
    if settings.database_url is not None:
        conninfo = settings.database_url.get_secret_value()
        embedded_dir = None
    else:
        embedded_dir = settings.pgdata.expanduser().resolve()
        conninfo = start_embedded(embedded_dir, stop_at_exit=stop_embedded_at_exit)
    db = Database(conninfo, embedded_dir, settings.connect_timeout)
    with _connect(conninfo, settings.connect_timeout, autocommit=True) as conn:
        ensure_extensions(conn)
        migrate(conn)
    return db


def ensure_extensions(conn: psycopg.Connection[Any]) -> None:
    q = queries()
    available = conn.execute(q["pgvector_available"]).fetchone()
    if not available or available["default_version"] is None:
        raise PgvectorMissing()
    try:
        # under the migration lock: two processes starting on a new database at
        # once would otherwise both try to create the extension, and one fail
        with conn.transaction():
            conn.execute(q["migration_lock"], {"key": _MIGRATION_LOCK})
            conn.execute(q["create_extensions"])
    except psycopg.errors.InsufficientPrivilege:
        raise PgvectorMissing(
            "pgvector is installed on the server but this user may not CREATE EXTENSION vector: "
            "ask an administrator to run it once in this database."
        ) from None
    row = conn.execute(q["pgvector_version"]).fetchone()
    version = tuple(int(p) for p in re.findall(r"\d+", row["extversion"])[:2]) if row else ()
    if version < MIN_PGVECTOR:
        raise PgvectorMissing(
            f"pgvector {row['extversion'] if row else '?'} is too old: 0.8 or newer is needed "
            "(iterative index scans). Run ALTER EXTENSION vector UPDATE."
        )


def migrate(conn: psycopg.Connection[Any]) -> list[str]:
    """Create the schema or apply pending migrations; return what was applied."""
    q = queries()
    applied: list[str] = []
    try:
        with conn.transaction():
            conn.execute(q["migration_lock"], {"key": _MIGRATION_LOCK})
            conn.execute(q["create_migrations_table"])
            done = {r["version"] for r in conn.execute(q["applied_migrations"]).fetchall()}
            all_migrations = migrations()
            if not done:
                has_tables = conn.execute(q["kb_tables_exist"]).fetchone()
                if has_tables and has_tables["exists"]:
                    raise MigrationError(
                        "the database has knowledge-base tables but no migration history; "
                        "use an empty database or the one this tool created"
                    )
                conn.execute(schema_sql())
                for version, _ in all_migrations:
                    conn.execute(q["record_migration"], {"version": version})
                return [v for v, _ in all_migrations]
            for version, statement in all_migrations:
                if version in done:
                    continue
                conn.execute(statement)
                conn.execute(q["record_migration"], {"version": version})
                applied.append(version)
    except psycopg.Error as exc:
        raise MigrationError(f"schema migration failed: {exc}") from None
    return applied


def migrate_from_history(conn: psycopg.Connection[Any]) -> None:
    """Build the schema by replaying every migration (used to check schema.sql)."""
    q = queries()
    with conn.transaction():
        conn.execute(q["create_migrations_table"])
        for version, statement in migrations():
            conn.execute(statement)
            conn.execute(q["record_migration"], {"version": version})


@dataclass(frozen=True, slots=True)
class ModelBinding:
    name: str
    dimension: int
    vectors: str
    """What the stored vectors were computed as (the model, and its precision unless
    fp32: ``search.embedder.vector_space``); ``name`` where it was never recorded."""


def _binding(value: dict[str, Any]) -> ModelBinding:
    name = str(value["name"])
    return ModelBinding(name, int(value["dimension"]), str(value.get("vectors") or name))


def bind_embedding_model(
    conn: psycopg.Connection[Any], name: str, dimension: int, vectors: str | None = None
) -> ModelBinding:
    """Fix the vector dimension to the model's on first use; refuse another model
    later. Returns the binding as stored (``vectors``: what a first binding records)."""
    q = queries()
    with conn.transaction():
        conn.execute(q["migration_lock"], {"key": _MIGRATION_LOCK})
        current = conn.execute(q["get_meta"], {"key": "embedding_model"}).fetchone()
        if current is None:
            conn.execute(sql.SQL(q["bind_embedding_dimension"]).format(dim=sql.Literal(dimension)))
            conn.execute(q["create_hnsw_index"])
            value = {"name": name, "dimension": dimension, "vectors": vectors or name}
            conn.execute(q["set_meta"], {"key": "embedding_model", "value": Jsonb(value)})
            return _binding(value)
        bound = current["value"]
        if bound.get("name") != name or int(bound.get("dimension", -1)) != dimension:
            raise ModelMismatch(
                f"this database holds {bound.get('dimension')}-d vectors from the embedding model "
                f"{bound.get('name')!r}, but the configured model is {name!r} ({dimension}-d). "
                "Configure the same model (KB_EMBEDDING_MODEL), or point KB_PGDATA / DATABASE_URL "
                "at a new database and rebuild."
            )
        return _binding(bound)


def bound_model(conn: psycopg.Connection[Any]) -> ModelBinding | None:
    row = conn.execute(queries()["get_meta"], {"key": "embedding_model"}).fetchone()
    if row is None:
        return None
    return _binding(row["value"])


def server_conninfo(settings: DatabaseSettings) -> str:
    """Connection string of the configured server: ``DATABASE_URL``, else the
    embedded server (started on demand)."""
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    return start_embedded(settings.pgdata.expanduser().resolve())


def named_database(server: str, name: str) -> Database:
    """Create (if needed) and migrate the database ``name`` on ``server``:
    evaluation and benchmark data stay out of the knowledge base."""
    q = queries()
    with _connect(server, 10.0, autocommit=True) as conn:
        row = conn.execute(q["database_exists"], {"name": name}).fetchone()
        if not row or not row["exists"]:
            conn.execute(sql.SQL(q["create_database"]).format(name=sql.Identifier(name)))
    return open_database(
        DatabaseSettings(database_url=SecretStr(make_conninfo(server, dbname=name)))
    )
