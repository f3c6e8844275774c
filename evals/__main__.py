"""``python -m evals NAME [options]``: run one evaluation harness.

``python -m evals NAME --help`` shows a harness's own options.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from evals.cli import EXIT_OK, EXIT_USAGE, fail

#: command -> (module, what it measures)
HARNESSES = {
    "extraction": (
        "evals.extraction_quality",
        "relation extraction on KnowledgeNet and NER on wikigold",
    ),
    "graph": ("evals.graph_quality", "the vendor graphs against hand-labelled vendor folders"),
    "rules": ("evals.rules", "what each relation rule finds over the corpus, hand-checked"),
    "search": ("evals.search_quality", "hybrid search on a BEIR dataset (e.g. SciFact)"),
    "vendor-queries": (
        "evals.vendor_queries",
        "hybrid search and each boost on the labelled vendor queries",
    ),
    "disambiguation": (
        "evals.disambiguation",
        "vendor-name resolution on the labelled query set",
    ),
}


def usage() -> str:
    width = max(map(len, HARNESSES))
    rows = "\n".join(f"  {name:<{width}}  {what}" for name, (_, what) in HARNESSES.items())
    return (
        "usage: python -m evals NAME [options]\n\n"
        "Evaluation harnesses (labelled data in evals/data/; "
        "`python -m evals NAME --help` for a harness's options):\n" + rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return EXIT_OK if args else EXIT_USAGE
    name, rest = args[0], args[1:]
    if name not in HARNESSES:
        return fail(f"no harness {name!r}; choose one of {', '.join(HARNESSES)}", EXIT_USAGE)
    module = importlib.import_module(HARNESSES[name][0])
    code: int = module.main(rest)
    return code


if __name__ == "__main__":
    sys.exit(main())
