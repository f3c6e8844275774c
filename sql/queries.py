"""Named SQL blocks loaded once from the package's ``.sql`` files."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import LiteralString

_BLOCK = re.compile(r"^-- ([a-z_][a-z0-9_]*) --\s*$", re.MULTILINE)

#: Column types of the binary COPY in ``copy_chunks``, in its column order.
COPY_CHUNKS_TYPES = (
    "int8",
    "int4",
    "int4",
    "text",
    "text",
    "text",
    "int4",
    "int4",
    "text",
    "vector",
    "jsonb",
    "text",
)

#: Column types of the binary COPY in ``copy_release_cycles``, in its column order.
COPY_RELEASE_CYCLES_TYPES = (
    "int8",
    "int4",
    "text",
    "date",
    *("date", "bool") * 5,
    "text",
    "date",
    "text",
    "text",
    "text",
    "jsonb",
)

QUERY_FILES = ("queries.sql", "search.sql", "graph.sql", "work.sql")


def parse_named_blocks(text: str) -> dict[str, LiteralString]:
    """Split ``-- name --`` blocks into a name -> statement mapping.

    >>> parse_named_blocks("-- one --\\nSELECT 1;\\n-- two --\\nSELECT 2;")
    {'one': 'SELECT 1;', 'two': 'SELECT 2;'}
    """
    parts = _BLOCK.split(text)
    out: dict[str, LiteralString] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in out:
            raise ValueError(f"duplicate query name {name!r}")
        # The files ship inside this package: their text is the project's own
        # SQL, never user data, which is what LiteralString stands for here.
        out[name] = body.strip()
    return out


@cache
def queries() -> dict[str, LiteralString]:
    """All named queries of the package."""
    merged: dict[str, LiteralString] = {}
    for filename in QUERY_FILES:
        text = resources.files("sql").joinpath(filename).read_text(encoding="utf-8")
        for name, body in parse_named_blocks(text).items():
            if name in merged:
                raise ValueError(f"query {name!r} defined twice")
            merged[name] = body
    return merged


def schema_sql() -> LiteralString:
    return resources.files("sql").joinpath("schema.sql").read_text("utf-8")


def migrations() -> list[tuple[str, LiteralString]]:
    """(version, statement) for every migration, in order."""
    folder = resources.files("sql").joinpath("migrations")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), folder.joinpath(name).read_text("utf-8")) for name in names]
