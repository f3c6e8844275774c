"""A rich progress bar for the pipeline's stages."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class RichProgress:
    """One bar per stage; disabled for --quiet / --json or when not a terminal."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._progress = Progress(
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def stage(self, name: str, total: int | None) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total or 0)
        self._task = self._progress.add_task(name, total=total or 0)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)
