"""Database settings, read from the environment when a command starts."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings, SettingsConfigDict


def setting(
    env: str,
    name: str,
    default: Any = PydanticUndefined,
    *,
    description: str,
    shown_default: str | None = None,
    **constraints: Any,
) -> Any:
    """A settings field read from the environment variable ``env``, or given in code
    by ``name`` (the field's own name), documented by ``description``.

    ``shown_default`` is what the documentation shows for a default that needs
    words (a computed path, "unset"); ``constraints`` go to :func:`pydantic.Field`
    as they are (``ge``, ``le``, ``default_factory``, ...).
    """
    if shown_default is not None:
        constraints["json_schema_extra"] = {"shown_default": shown_default}
    return Field(
        default=default,
        validation_alias=AliasChoices(env, name),
        description=description,
        **constraints,
    )


def blank_is_unset(value: object) -> object:
    """A ``mode="before"`` field validator: a variable set to an empty or blank
    string counts as unset (``None``).

    >>> blank_is_unset("  "), blank_is_unset("x")
    (None, 'x')
    """
    return None if isinstance(value, str) and not value.strip() else value


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, which a container or
    ``taskset`` narrows (``os.cpu_count()`` counts the whole machine's).

    >>> usable_cores() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) or 1


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

    database_url: SecretStr | None = setting(
        "DATABASE_URL",
        "database_url",
        None,
        description="postgresql:// URL of a server with pgvector; unset: embedded server",
        shown_default="unset: embedded server in KB_PGDATA",
    )
    pgdata: Path = setting(
        "KB_PGDATA",
        "pgdata",
        default_factory=default_pgdata,
        description="data directory of the embedded server (used when DATABASE_URL is unset)",
        shown_default="$XDG_DATA_HOME/vendor-knowledge/pgdata",
    )
    connect_timeout: float = setting(
        "KB_DB_CONNECT_TIMEOUT",
        "connect_timeout",
        10.0,
        gt=0,
        le=600,
        description="seconds to wait for a connection before failing",
    )

    _blank_is_unset = field_validator("database_url", mode="before")(blank_is_unset)

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


# -- one source for the documentation of every environment variable -------------
#
# ``--help`` environment sections and docs/configuration.md are generated from the
# settings models' fields (their alias, default and description), so a variable is
# documented where it is defined. A field whose default needs words (a computed
# path, "unset") says so with json_schema_extra={"shown_default": "..."}.

#: Variables read outside any settings model: (name, default, meaning).
OTHER_VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("XDG_DATA_HOME", "~/.local/share", "base folder of the default KB_PGDATA and key file"),
    (
        "KB_EVAL_DATA",
        "../shared/data",
        "evaluation data of the eval commands (KnowledgeNet, wikigold, SciFact, vendor corpus)",
    ),
    ("TEST_DATABASE_URL", "unset", "tests: a server to create test databases on"),
)


def _variable(field: Any) -> str | None:
    alias = field.validation_alias
    choices = getattr(alias, "choices", [alias])
    for choice in choices:
        if isinstance(choice, str) and choice.isupper():
            return choice
    return None


def _shown_default(field: Any) -> str:
    extra = field.json_schema_extra
    if isinstance(extra, dict) and "shown_default" in extra:
        return str(extra["shown_default"])
    default = field.get_default(call_default_factory=True)
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


def environment_rows(*models: type[BaseSettings]) -> list[tuple[str, str, str]]:
    """(variable, default, meaning) of every environment-backed field, in order."""
    rows: list[tuple[str, str, str]] = []
    for model in models:
        for field in model.model_fields.values():
            name = _variable(field)
            if name is not None:
                rows.append((name, _shown_default(field), field.description or ""))
    return rows


def environment_help(
    *models: type[BaseSettings], other: Sequence[tuple[str, str, str]] = ()
) -> str:
    """The ``environment`` section of a ``--help``: one entry per variable."""
    rows = environment_rows(*models) + list(other)
    width = max(len(name) for name, _, _ in rows) + 2
    lines = ["environment (defaults in brackets):"]
    for name, default, meaning in rows:
        text = textwrap.wrap(f"{meaning} [{default}]", width=94 - width) or [""]
        lines.append(f"  {name:<{width}}{text[0]}")
        lines.extend(" " * (width + 2) + more for more in text[1:])
    return "\n".join(lines) + "\n"


def environment_table(
    *models: type[BaseSettings], other: Sequence[tuple[str, str, str]] = ()
) -> str:
    """A markdown table of the variables (docs/configuration.md)."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, default, meaning in environment_rows(*models) + list(other):
        lines.append(f"| `{name}` | `{default}` | {meaning} |")
    return "\n".join(lines) + "\n"
