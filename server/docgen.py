"""The command line of the docs generated from the code (``docs/configuration.md``
from the settings models, ``docs/tools.md`` from the tool declarations): rewrite the
file, or ``--check`` that the committed one is what the code says (exit 1 if not)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def write_or_check(
    argv: Sequence[str] | None,
    prog: str,
    description: str | None,
    doc: Path,
    fresh: Callable[[str], str],
) -> int:
    """``fresh(current text)`` is the text ``doc`` should hold (``""`` when it is missing)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {doc.name} is out of date")
    args = parser.parse_args(argv)
    current = doc.read_text(encoding="utf-8") if doc.exists() else ""
    text = fresh(current)
    if args.check:
        if text != current:
            print(f"{doc} is out of date: run {prog}", file=sys.stderr)
            return 1
        return 0
    doc.write_text(text, encoding="utf-8")
    print(f"wrote {doc}")
    return 0
