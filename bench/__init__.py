"""Benchmarks: each runs as ``python -m bench.<name>`` (a module, or a package for the
larger ones: ``load``, ``server``, ``search``); the SQL they run directly lives in
``bench/queries.sql``.

Offline, on top of everything: may import any runtime package's public names and
``evals``; nothing imports it.
"""

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


def measuring_parser(
    name: str, doc: str | None, *, repeats: int, what: str, corpus: Path | None = None
) -> argparse.ArgumentParser:
    """:func:`bench_parser` of ``python -m bench.<name>``, with the options of a
    benchmark that repeats each measurement: ``--repeats`` (``what`` says what
    repeats), ``--out`` (the JSON results, ``bench/results/<name>.json``) and, given
    a default, ``--corpus``; :func:`parse_measuring` reads them."""
    out = RESULTS / f"{name}.json"
    parser = bench_parser(f"python -m bench.{name}", doc)
    parser.add_argument(
        "--repeats", type=int, default=repeats, help=f"{what} (at least 3; default {repeats})"
    )
    if corpus is not None:
        parser.add_argument(
            "--corpus",
            type=Path,
            default=corpus,
            help=f"the vendor notes measured on (default {corpus})",
        )
    parser.add_argument("--out", type=Path, default=out, help=f"results file (default {out})")
    return parser


def parse_measuring(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The arguments of a :func:`measuring_parser`; fewer than 3 repeats is a usage error."""
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error("--repeats must be at least 3")
    return args


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


def write_report(name: str, results: dict[str, Any], markdown: list[str]) -> str:
    """``bench/results/<name>.json`` (``results``) and ``<name>.md`` (the lines of
    ``markdown``); the line that says where they are."""
    write_results(RESULTS / f"{name}.json", results)
    (RESULTS / f"{name}.md").write_text("\n".join(markdown), encoding="utf-8")
    return f"results: {RESULTS / name}.json and {name}.md"
