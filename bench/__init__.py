"""Benchmarks: each runs as ``python -m bench.<name>`` (a module, or a package for the
larger ones: ``load``, ``server``, ``search``); the SQL they run directly lives in
``bench/queries.sql``."""

from __future__ import annotations

import argparse
import json
import os
import platform
from functools import cache
from pathlib import Path
from typing import Any, LiteralString

from sql.queries import parse_named_blocks

#: The repository, and the folder every benchmark writes its results to.
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"


@cache
def bench_queries() -> dict[str, LiteralString]:
    """The named statements of ``bench/queries.sql``."""
    return parse_named_blocks(Path(__file__).with_name("queries.sql").read_text(encoding="utf-8"))


def bench_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of a benchmark (``prog``: ``python -m bench.<name>``), whose
    ``--help`` shows the benchmark's docstring ``doc`` as it is written."""
    return argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def machine() -> dict[str, Any]:
    """The machine a benchmark ran on, for its results."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def write_results(path: Path, results: dict[str, Any]) -> None:
    """``results`` as indented JSON at ``path``, its folder made if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
