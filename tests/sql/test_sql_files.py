"""All SQL lives in .sql files: no statement in a string literal of a Python file
outside the tests (sql/__init__.py's promise, checked)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.fixtures import REPO

#: A string that starts like a statement: an upper-case SQL verb, then what follows it.
STATEMENT = re.compile(
    r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|TRUNCATE|COPY|LISTEN|NOTIFY|WITH"
    r"|SET|VACUUM|ANALYZE|GRANT|EXPLAIN)\s+([A-Za-z_(*'\"{]|$)"
)
SKIP = {".venv", ".ci", "tests", "node_modules", ".git", "build"}


def sql_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal, or leading part of an f-string,
    that reads as an SQL statement."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        # the literal parts of an f-string are Constant nodes too
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and STATEMENT.match(node.value)
        ):
            found.append((node.lineno, node.value))
    return found


def python_files() -> list[Path]:
    return [
        p for p in sorted(REPO.rglob("*.py")) if not SKIP.intersection(p.relative_to(REPO).parts)
    ]


def test_no_sql_in_python_string_literals() -> None:
    files = python_files()
    assert len(files) > 50
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {text.strip()[:60]!r}"
        for path in files
        for line, text in sql_literals(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "SQL belongs in a .sql file as a named block:\n" + "\n".join(offenders)


def test_the_scan_finds_statements_and_leaves_prose_alone() -> None:
    source = '''
a = "SELECT id FROM chunks"
b = f"LISTEN {channel}"
c = """
    UPDATE work_units SET done_at = now()
"""
d = "this user may not CREATE EXTENSION vector: ask an administrator"
e = "Select a vendor"
f = "SET"
'''
    assert sorted(line for line, _ in sql_literals(source)) == [2, 3, 4]
