"""Evaluation harnesses: how good the product's answers are, on labelled data.

Nothing here serves a rebuild or a request; the runtime packages (``sql``,
``extraction``, ``search``, ``kg``, ``server``) never import it. Each harness runs as
``python -m evals <name>`` (``python -m evals --help`` lists them), its labelled data
lives in ``evals/data/<name>/`` with a README saying how it was made, and the SQL only
the harnesses run is in ``evals/queries.sql``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import LiteralString

from sql.queries import parse_named_blocks

#: This checkout; the shared evaluation data sits beside it (``../shared/data``).
REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@cache
def eval_queries() -> dict[str, LiteralString]:
    """The named statements of ``evals/queries.sql``."""
    return parse_named_blocks(Path(__file__).with_name("queries.sql").read_text(encoding="utf-8"))
