"""Database errors. Each class's docstring is its default message."""

from __future__ import annotations


class DatabaseError(Exception):
    """The knowledge base database could not be used."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())


class DatabaseUnavailable(DatabaseError):
    """Cannot connect to PostgreSQL: check DATABASE_URL, or unset it to use the embedded server."""


class EmbeddedServerError(DatabaseError):
    """The embedded PostgreSQL server could not be started."""


class PgvectorMissing(DatabaseError):
    """The database has no pgvector extension: install pgvector (>= 0.8) in it or unset
    DATABASE_URL to use the embedded server, which ships it."""


class MigrationError(DatabaseError):
    """The schema could not be created or migrated."""


class ModelMismatch(DatabaseError):
    """The database was built with a different embedding model."""
