"""What a rebuild reports: its progress protocol, its summary and its timer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from extraction.notes.corpus import Problem


class Progress(Protocol):
    """What the pipeline reports to (a rich progress bar in the CLI)."""

    def stage(self, name: str, total: int | None) -> None: ...
    def advance(self, n: int = 1) -> None: ...


class NoProgress:
    def stage(self, name: str, total: int | None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


@dataclass(slots=True)
class BuildReport:
    """What a rebuild did; printed as the summary table."""

    root: str
    build_id: int | None = None
    files_seen: int = 0
    documents_new: int = 0
    documents_changed: int = 0
    documents_unchanged: int = 0
    documents_deleted: int = 0
    documents_reextracted: int = 0
    """Unchanged notes read again: made by another extractor version, a name their
    text holds changed in the gazetteer, or stored without a card vector (0016)."""
    notes: dict[str, list[str]] = field(default_factory=dict)
    """The stored paths of the notes published, by what happened to them: ``new``,
    ``changed``, ``reextracted``, ``deleted``."""
    chunks_written: int = 0
    chunks_embedded: int = 0
    cards_embedded: int = 0
    """Note cards embedded (not cached): each note's own vector (extraction.notes.card)."""
    chunks_extracted: int = 0
    vendors_rebuilt: int = 0
    release_cycles_written: int = 0
    """Release cycles of the written product notes (replacing what they held)."""
    totals: dict[str, int] = field(default_factory=dict)
    entities_by_type: dict[str, int] = field(default_factory=dict)
    relationships_by_type: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    work_units: int = 0
    """Embed and extract units the work was split into."""
    work_units_claimed_again: int = 0
    """Units claimed again after a worker died or lost its lease."""
    workers: int = 0
    """Worker processes (this one included) that finished units."""
    vectors_replaced: str | None = None
    """The vector space the stored chunks had when this run embedded every note again
    in its own (another precision of the same model); None when they matched."""

    @property
    def up_to_date(self) -> bool:
        return self.build_id is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "build_id": self.build_id,
            "up_to_date": self.up_to_date,
            "files_seen": self.files_seen,
            "documents": {
                "new": self.documents_new,
                "changed": self.documents_changed,
                "unchanged": self.documents_unchanged,
                "deleted": self.documents_deleted,
                "reextracted": self.documents_reextracted,
            },
            "notes": self.notes,
            "chunks_written": self.chunks_written,
            "chunks_embedded": self.chunks_embedded,
            "cards_embedded": self.cards_embedded,
            "chunks_extracted": self.chunks_extracted,
            "vendors_rebuilt": self.vendors_rebuilt,
            "release_cycles_written": self.release_cycles_written,
            "totals": self.totals,
            "entities_by_type": self.entities_by_type,
            "relationships_by_type": self.relationships_by_type,
            "problems": [
                {"path": p.path, "kind": p.kind, "message": p.message, "action": p.action}
                for p in self.problems
            ],
            "stage_seconds": {k: round(v, 3) for k, v in self.stage_seconds.items()},
            "models": self.models,
            "vectors_replaced": self.vectors_replaced,
            "work": {
                "units": self.work_units,
                "claimed_again": self.work_units_claimed_again,
                "workers": self.workers,
            },
        }


class Timer:
    def __init__(self, report: BuildReport) -> None:
        self._report = report

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - start)

    def add(self, stage: str, seconds: float) -> None:
        self._report.stage_seconds[stage] = self._report.stage_seconds.get(stage, 0.0) + seconds
