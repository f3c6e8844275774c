"""What every harness's command shares: one ``error:`` line and an exit code for each
failure a user can cause (2: a bad argument, file or setting; 1: the database, the
corpus or a model failed), never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from evals.corpus import CorpusMissing
from extraction.notes.corpus import CorpusError
from extraction.rebuild.pipeline import RebuildError
from search.errors import EmbeddingConfigError
from sql.cli import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, print_error
from sql.errors import DatabaseError
from sql.settings import settings_problem

__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "HarnessError",
    "fail",
    "reported",
    "show_report",
]


class HarnessError(Exception):
    """A failure to report as one line, with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int) -> int:
    print_error(Console(stderr=True), escape(message))
    return code


def reported(body: Callable[[], int]) -> int:
    """Run a harness, turning the failures a user can cause into one line each."""
    try:
        return body()
    except HarnessError as exc:
        return fail(str(exc), exc.code)
    except ValidationError as exc:
        return fail(settings_problem(exc), EXIT_USAGE)
    except CorpusMissing as exc:
        return fail(str(exc), EXIT_USAGE)
    except (CorpusError, RebuildError, DatabaseError, EmbeddingConfigError) as exc:
        return fail(str(exc), EXIT_FAILURE)


def show_report(report: Any, as_json: bool, render: Callable[[], None]) -> int:
    """A harness's report on stdout: indented JSON with ``--json`` (``as_json``), its
    tables otherwise (``render``); the exit code of a harness that ran."""
    if as_json:
        option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
        sys.stdout.write(orjson.dumps(report, option=option).decode() + "\n")
    else:
        render()
    return EXIT_OK
