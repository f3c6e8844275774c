"""Benchmarks: each runs as ``python -m bench.<name>`` (a module, or a package for the
larger ones: ``load``, ``server``, ``search``); the SQL they run directly lives in
``bench/queries.sql``."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import LiteralString

from sql.queries import parse_named_blocks


@cache
def bench_queries() -> dict[str, LiteralString]:
    """The named statements of ``bench/queries.sql``."""
    return parse_named_blocks(Path(__file__).with_name("queries.sql").read_text(encoding="utf-8"))
