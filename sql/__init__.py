"""PostgreSQL: schema, migrations, named queries, connections, embedded server.

Every statement the project runs lives in a ``.sql`` file of this package as a
named block (``-- name --`` followed by the statement) and is looked up by
name: ``queries()["upsert_vendor"]``. No SQL text lives in ``.py`` files.

Imports nothing of the project: every other package builds on it.
"""

from sql.errors import (
    DatabaseError,
    DatabaseUnavailable,
    EmbeddedServerError,
    MigrationError,
    ModelMismatch,
    PgvectorMissing,
)
from sql.queries import queries

__all__ = [
    "DatabaseError",
    "DatabaseUnavailable",
    "EmbeddedServerError",
    "MigrationError",
    "ModelMismatch",
    "PgvectorMissing",
    "queries",
]
