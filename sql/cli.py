"""What the command lines share (``python -m extraction``, ``kg``, ``server`` and
``evals``): their exit codes, a failure a user can cause as one ``error:`` line,
and a ``--help`` that ends with the environment variables the command reads.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from sql.settings import settings_problem

if TYPE_CHECKING:
    from rich.console import Console

    from sql.database import Database

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A failure to report as one line, with an exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def settings_error(exc: ValidationError) -> CliError:
    """A settings model's refusal of the environment, as a usage error naming every
    variable it refused."""
    return CliError(settings_problem(exc), EXIT_USAGE)


def open_configured_database() -> Database:
    """The database the environment names (``DATABASE_URL``, or the embedded server in
    ``KB_PGDATA``); a bad setting, or a database that cannot be opened, is a
    :class:`CliError`."""
    from sql.database import open_database
    from sql.errors import DatabaseError
    from sql.settings import DatabaseSettings

    try:
        settings = DatabaseSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None
    try:
        return open_database(settings)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None


def print_error(err: Console, markup: str) -> None:
    """``error: <markup>`` on ``err`` (rich markup: escape what a user can write)."""
    err.print(f"[bold red]error:[/] {markup}", highlight=False, soft_wrap=True)


def moved_elsewhere(given: Sequence[str], moved: Mapping[str, str], err: Console) -> bool:
    """Whether ``given`` starts with a command that has moved (``moved``: its name ->
    the command to run instead), saying where on ``err`` if so."""
    if given and given[0] in moved:
        err.print(
            f"[bold red]error:[/] the evaluation harnesses moved: run `{moved[given[0]]}`",
            highlight=False,
        )
        return True
    return False


def ending_with(environment: str) -> dict[str, Any]:
    """The arguments of an argparse parser whose ``--help`` ends with ``environment``
    (:func:`sql.settings.environment_help`), its lines kept as they are."""
    return {"epilog": environment, "formatter_class": argparse.RawDescriptionHelpFormatter}
