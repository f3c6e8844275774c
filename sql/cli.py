"""What the command lines share (``python -m extraction``, ``kg``, ``server`` and
``evals``): their exit codes, a failure a user can cause as one ``error:`` line,
a ``--help`` that ends with the environment variables the command reads, and
``--json`` output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from sql.settings import settings_problem

if TYPE_CHECKING:
    from rich.console import Console

    from sql.database import Database

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def print_json(value: Any) -> None:
    """``value`` on stdout as indented JSON (dataclasses as objects, sets sorted)."""
    sys.stdout.write(
        orjson.dumps(value, option=orjson.OPT_INDENT_2, default=_json_default).decode() + "\n"
    )


def _json_default(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, frozenset | set):
        return sorted(value)
    raise TypeError


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


def run_command_line(
    argv: Sequence[str] | None,
    parser: Callable[[], argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], int],
    *,
    moved: Mapping[str, str] | None = None,
    failures: tuple[type[Exception], ...] = (),
    interrupted: str | None = "[bold red]interrupted[/]",
) -> int:
    """A command line's ``main``: a moved command named (``moved``), the arguments
    parsed (``parser()``), then ``run(args)``, whose exit code it returns. A
    :class:`CliError`, or an exception of ``failures`` (exit 1), is one ``error:``
    line, its text shown as written; Ctrl-C prints ``interrupted`` (unless None)
    and exits 130."""
    from rich.console import Console
    from rich.markup import escape

    given = list(sys.argv[1:] if argv is None else argv)
    err = Console(stderr=True)
    if moved and moved_elsewhere(given, moved, err):
        return EXIT_USAGE
    args = parser().parse_args(given)
    try:
        return run(args)
    except CliError as exc:
        print_error(err, escape(str(exc)))
        return exc.code
    except failures as exc:
        print_error(err, escape(str(exc)))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        if interrupted is not None:
            err.print(interrupted)
        return 130


class CommandLine:
    """The parser of a command line and of its commands, each ``--help`` ending with
    the environment variables the command line reads (``environment``, from
    :func:`sql.settings.environment_help`), its lines kept as they are."""

    def __init__(
        self, prog: str, description: str, environment: str, *, required: bool = True
    ) -> None:
        self.parser = argparse.ArgumentParser(
            prog=prog, description=description, **self._ending(environment)
        )
        self.environment = environment
        self._required = required
        self._commands: argparse._SubParsersAction[argparse.ArgumentParser] | None = None

    @staticmethod
    def _ending(environment: str) -> dict[str, Any]:
        return {"epilog": environment, "formatter_class": argparse.RawDescriptionHelpFormatter}

    def command(
        self, name: str, help_text: str, description: str | None = None
    ) -> argparse.ArgumentParser:
        """A command (``dest="command"``): ``help_text`` in the list of commands,
        ``description`` (``help_text`` by default) atop its own ``--help``."""
        if self._commands is None:
            self._commands = self.parser.add_subparsers(
                dest="command", metavar="COMMAND", required=self._required
            )
        return self._commands.add_parser(
            name,
            help=help_text,
            description=description or help_text,
            **self._ending(self.environment),
        )
