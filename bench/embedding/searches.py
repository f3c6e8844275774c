"""The previous default engine's ``hybrid_search`` figure, as committed, for the
benchmark's comparison (the engine itself is gone)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

TXTAI = "txtai hybrid, search(q, 10)"
#: The last ``bench.search`` run of the numpy engine (the default then), committed.
PREVIOUS_COMMIT = "435c384"
PREVIOUS_ROW = "hybrid_search end to end"


def previous_default(repo: Path) -> dict[str, Any] | None:
    """The SciFact ``hybrid_search end to end`` row and the date of
    ``bench/results/search.md`` as committed at :data:`PREVIOUS_COMMIT`, or None
    when git cannot show it."""
    try:
        text = subprocess.run(
            ["git", "show", f"{PREVIOUS_COMMIT}:bench/results/search.md"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    date = re.search(r"^# Search latency \((\d{4}-\d{2}-\d{2})\)", text, re.M)
    section = text.split("(scifact)", 1)[-1].split("\n## ", 1)[0]
    row = re.search(rf"^\| {PREVIOUS_ROW} \| ([\d.]+) \| ([\d.]+) \|", section, re.M)
    if not (date and row):
        return None
    return {
        "commit": PREVIOUS_COMMIT,
        "date": date.group(1),
        "p50_ms": float(row.group(1)),
        "p95_ms": float(row.group(2)),
    }
