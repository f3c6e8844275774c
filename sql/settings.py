"""Database settings, read from the environment when a command starts."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_pgdata() -> Path:
    """``$XDG_DATA_HOME/vendor-knowledge/pgdata`` (``~/.local/share/...`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vendor-knowledge" / "pgdata"


class DatabaseSettings(BaseSettings):
    """Where the knowledge base lives.

    ``DATABASE_URL`` selects any PostgreSQL with pgvector; without it an
    embedded PostgreSQL is started on demand in ``KB_PGDATA``.
    """

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    database_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "database_url"),
        description="postgresql:// URL of a server with pgvector; unset: embedded server",
    )
    pgdata: Path = Field(
        default_factory=default_pgdata,
        validation_alias=AliasChoices("KB_PGDATA", "pgdata"),
        description="data directory of the embedded server (used when DATABASE_URL is unset)",
    )
    connect_timeout: float = Field(
        default=10.0,
        gt=0,
        le=600,
        validation_alias=AliasChoices("KB_DB_CONNECT_TIMEOUT", "connect_timeout"),
        description="seconds to wait for a connection before failing",
    )

    @field_validator("database_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("database_url")
    @classmethod
    def _looks_like_postgres(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        raw = value.get_secret_value()
        if not raw.startswith(("postgresql://", "postgres://")) and "=" not in raw:
            raise ValueError("must be a postgresql:// URL or a libpq 'key=value' string")
        return value


def settings_problem(exc: ValidationError) -> str:
    """One line naming every variable a settings class refused, and why.

    >>> try:
    ...     DatabaseSettings(KB_DB_CONNECT_TIMEOUT="soon")
    ... except ValidationError as e:
    ...     print(settings_problem(e)[:55])
    invalid setting: KB_DB_CONNECT_TIMEOUT: Input should be
    """
    problems = [f"{e['loc'][0] if e['loc'] else '?'}: {e['msg']}" for e in exc.errors()]
    return "invalid setting: " + "; ".join(problems)
