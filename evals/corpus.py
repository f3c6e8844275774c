"""The evaluation knowledge base: the shared vendor corpus built by the product's
own rebuild into one database (``kb_eval_vendor_corpus`` on the configured server),
which the vendor-graph, vendor-query and disambiguation harnesses and the benchmarks
read. A rebuild is incremental, so only the first run pays for the whole corpus."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from evals import REPO
from extraction.rebuild.pipeline import Rebuilder
from extraction.rebuild.progress import RichProgress
from extraction.rebuild.summary import BuildReport
from sql.database import Database, named_database, server_conninfo
from sql.settings import DatabaseSettings

EVAL_DATABASE = "kb_eval_vendor_corpus"


class CorpusMissing(ValueError):
    """The folder given as the vendor corpus is not one."""


def default_corpus() -> Path:
    """``$KB_EVAL_DATA/vendor_corpus``, else ``shared/data/vendor_corpus`` beside the repository."""
    base = Path(os.environ.get("KB_EVAL_DATA") or REPO.parent / "shared" / "data")
    return base / "vendor_corpus"


def eval_database(name: str = EVAL_DATABASE) -> Database:
    """The evaluation database on the server the settings name (created if missing)."""
    return named_database(server_conninfo(DatabaseSettings()), name)


def checked_corpus(corpus: Path) -> Path:
    """``corpus``, if it is a vendor corpus (checked before any database work)."""
    if not (corpus / "vendors").is_dir():
        raise CorpusMissing(
            f"{corpus}: not a vendor corpus (no vendors/ folder; set --corpus or KB_EVAL_DATA)"
        )
    return corpus


def build_vendor_corpus(db: Database, corpus: Path, *, quiet: bool = False) -> BuildReport:
    """Bring ``db`` up to date with ``corpus`` (a progress bar on stderr unless ``quiet``)."""
    checked_corpus(corpus)
    with RichProgress(Console(stderr=True), enabled=not quiet) as progress:
        return Rebuilder(db, progress=progress).run(corpus)
