"""Following the notes folder as it changes (``python -m extraction watch``).

The watcher waits for changes under the corpus root (``watchfiles``: inotify,
FSEvents or ReadDirectoryChangesW, or polling for network drives) and then runs
the same incremental rebuild as ``rebuild-graph`` over the whole root, in one
process whose models are loaded once and kept. The events say only *when* to run
and which notes to make sure are whole; *what* to apply is decided as always, by
comparing the folder with the database (:mod:`extraction.rebuild.planning`). So
the first batch after a start, a crash, a missed event or a failed batch brings
the knowledge base to what ``rebuild-graph`` would make of the folder.

A batch:

1. gathers changes until every changed path has stayed the same for
   ``KB_WATCH_QUIET_S`` (0.3 s): a burst (a ``git checkout``, a folder copied in)
   becomes one batch. After ``KB_WATCH_MAX_WAIT_S`` (5 s) of a burst that does not
   settle, the notes that have settled are applied and the others wait.
2. Settled means: size, modification time and SHA-256 unchanged across at least
   the quiet period (:class:`Settling`). A note that looks cut short (empty, front
   matter opened and never closed, unreadable) must stay so for
   ``KB_WATCH_HOLD_S`` (3 s) before it is applied as it is, with the problem the
   rebuild reports for it. Notes still changing are *held*: the rebuild leaves
   them as the knowledge base has them (``being_written`` problem), and applies
   them once they settle. The rebuild also holds a note whose bytes changed
   between its scan and its reading.
3. runs :meth:`Rebuilder.run` on the root: one publish transaction, one
   ``graph_builds`` row, whose notification tells every server of the new build.

Changes to hidden paths and to the temporary, swap, backup and lock files editors
write (:func:`~extraction.notes.walk.is_ignored_name`, and vim's ``4913`` write
probe) are ignored; an atomic-rename save shows as its final path. A batch that
fails for a reason that passes (the database away, another rebuild running, the
folder unmounted) is tried again after 1, 2, 4 ... 60 s.

Stopping (:func:`stop_on_signals`): Ctrl-C or SIGTERM between batches stops at
once; during a batch they interrupt it, and its transaction is rolled back (the
previous knowledge base stays, the build is recorded as interrupted, and the next
start applies what it had to).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

from extraction.models import ExtractionContext
from extraction.notes.corpus import CorpusError, Problem
from extraction.notes.front_matter import unclosed_front_matter
from extraction.notes.walk import MARKDOWN_SUFFIXES, is_ignored_name, stored_path
from extraction.rebuild.pipeline import Rebuilder, RebuildError
from extraction.rebuild.summary import BuildReport
from extraction.settings import ExtractionSettings
from sql.errors import DatabaseUnavailable

#: How often watchfiles' own loop looks for new events, in milliseconds (its default).
STEP_MS = 50
#: Longest wait before a failed batch is tried again, in seconds.
MAX_RETRY_S = 60.0


@dataclass(frozen=True, slots=True)
class Look:
    """What a changed path is at one moment: ``state`` is the note's SHA-256,
    ``gone``, ``folder``, ``other`` (not a regular file) or ``unreadable``."""

    state: str
    size: int = -1
    mtime_ns: int = -1
    cut_short: bool = False
    """empty, front matter never closed, or unreadable: perhaps caught mid-write"""


def look(path: Path) -> Look:
    """One look at ``path``; the note's bytes are read whole and hashed."""
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            return Look("folder")
        if not stat.S_ISREG(st.st_mode):
            return Look("other")
        data = path.read_bytes()
    except FileNotFoundError:
        return Look("gone")
    except OSError:
        return Look("unreadable", cut_short=True)
    cut_short = not data.strip() or unclosed_front_matter(data.decode("utf-8", "replace"))
    return Look(hashlib.sha256(data).hexdigest(), st.st_size, st.st_mtime_ns, cut_short)


@dataclass(slots=True)
class _Seen:
    first_change: float
    look: Look | None = None
    since: float = 0.0


class Settling:
    """The changed paths not applied yet, and which have settled.

    A path has settled when it has looked the same for ``quiet_s`` (``hold_s`` if
    it looks cut short); a new change of it starts its clock again.

    >>> looks = {Path("a.md"): Look("1"), Path("b.md"): Look("2")}
    >>> s = Settling(quiet_s=0.3, hold_s=3.0)
    >>> s.changed([Path("a.md"), Path("b.md")], now=10.0)
    >>> s.review(10.0, looks.__getitem__)
    ([], [PosixPath('a.md'), PosixPath('b.md')])
    >>> looks[Path("b.md")] = Look("3")  # b is still being written
    >>> s.review(10.4, looks.__getitem__)
    ([PosixPath('a.md')], [PosixPath('b.md')])
    >>> s.done([Path("a.md")]); s.oldest_change()
    10.0
    """

    def __init__(self, quiet_s: float, hold_s: float) -> None:
        self.quiet_s = quiet_s
        self.hold_s = max(hold_s, quiet_s)
        self.pending: dict[Path, _Seen] = {}

    def changed(self, paths: Iterable[Path], now: float) -> None:
        for path in paths:
            seen = self.pending.setdefault(path, _Seen(now))
            seen.look, seen.since = None, now

    def review(self, now: float, look_at: Callable[[Path], Look]) -> tuple[list[Path], list[Path]]:
        """The pending paths that have settled, and those that have not."""
        ready: list[Path] = []
        waiting: list[Path] = []
        for path, seen in sorted(self.pending.items()):
            current = look_at(path)
            if current != seen.look:
                seen.look, seen.since = current, now
            steady = now - seen.since
            settled = steady >= (self.hold_s if current.cut_short else self.quiet_s)
            (ready if settled else waiting).append(path)
        return ready, waiting

    def oldest_change(self) -> float:
        return min(seen.first_change for seen in self.pending.values())

    def done(self, paths: Iterable[Path]) -> None:
        for path in paths:
            self.pending.pop(path, None)


def ignores(root: Path) -> Callable[[Any, str], bool]:
    """watchfiles' filter for ``root``: True for a change that may matter (a note,
    a folder, or a deletion, which may be a folder of notes), False for hidden
    paths, editors' temporary files and other files that are not notes.

    >>> keep = ignores(Path("/n"))
    >>> [keep(1, p) for p in ("/n/vendors/A/a.md", "/n/vendors/A/.a.md.swp", "/n/.git/x")]
    [True, False, False]
    >>> [keep(3, p) for p in ("/n/vendors/A/a.md~", "/n/vendors/A/4913", "/n/vendors/A")]
    [False, False, True]
    """

    def keep(change: Any, path: str) -> bool:
        p = Path(path)
        try:
            parts = p.relative_to(root).parts
        except ValueError:
            return True
        if any(is_ignored_name(part) for part in parts):
            return False
        name = parts[-1] if parts else ""
        if name.isdigit() and not p.is_dir():  # vim's write probe: 4913, or the next number
            return False
        if Path(name).suffix.lower() in MARKDOWN_SUFFIXES:
            return True
        return int(change) == 3 or p.is_dir()  # watchfiles.Change.deleted

    return keep


@dataclass(slots=True)
class Batch:
    """One run of the rebuild by the watcher."""

    at: datetime
    """when it ended"""
    seconds: float
    """the rebuild's own time"""
    changed_paths: int
    """paths whose change it applied (0: the catch-up when the watcher starts)"""
    after_change_s: float | None
    """from the first change it applied to its end: what a user waits after saving"""
    report: BuildReport | None = None
    error: str | None = None
    retry_s: float | None = None
    problems: list[Problem] = field(default_factory=list)
    """the problems to show: those of the notes it read or held, and new ones"""

    def to_dict(self) -> dict[str, Any]:
        base: dict[str, Any] = {
            "at": self.at.isoformat(timespec="milliseconds"),
            "seconds": round(self.seconds, 3),
            "changed_paths": self.changed_paths,
            "after_change_s": None
            if self.after_change_s is None
            else round(self.after_change_s, 3),
        }
        if self.error is not None:
            return {"event": "error", **base, "message": self.error, "retry_s": self.retry_s}
        assert self.report is not None
        event = "up_to_date" if self.report.up_to_date else "build"
        return {"event": event, **base, "report": self.report.to_dict()}

    def lines(self) -> list[str]:
        """What the watcher prints for it: one line, then one per problem shown."""
        stamp = self.at.strftime("%H:%M:%S")
        if self.error is not None:
            return [f"{stamp} not applied: {self.error}; trying again in {self.retry_s:g} s"]
        report = self.report
        assert report is not None
        if report.up_to_date:
            head = f"{stamp} up to date: {report.files_seen:,} notes"
        else:
            what = [f"{len(report.notes.get(k, []))} {k}" for k in _KINDS if report.notes.get(k)]
            names = [p for k in _KINDS for p in report.notes.get(k, [])]
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            head = (
                f"{stamp} build #{report.build_id}: {', '.join(what) or 'graphs rebuilt'}"
                + (f" ({shown})" if shown else "")
                + f" in {self.seconds:.1f} s"
                + (
                    f", {self.after_change_s:.1f} s after the change"
                    if self.after_change_s is not None
                    else ""
                )
            )
        count = len(self.problems)
        head += f"; {count} problem{'s' if count != 1 else ''}" if count else ""
        return [head] + [f"  {p.path}: {p.message} ({p.action})" for p in self.problems]


_KINDS = ("new", "changed", "deleted", "reextracted")


class Watcher:
    """Applies the changes of the notes under ``root`` with ``rebuilder`` (whose
    models it loads once and keeps) until :attr:`stop` is set."""

    def __init__(
        self,
        rebuilder: Rebuilder,
        root: Path,
        settings: ExtractionSettings,
        *,
        on_batch: Callable[[Batch], None],
        on_ready: Callable[[], None] = lambda: None,
        poll: bool = False,
        parent_pid: int | None = None,
    ) -> None:
        self.rebuilder = rebuilder
        self.root = root
        self.real_root = root.resolve()
        self.settings = settings
        self.poll = poll
        self.on_batch = on_batch
        self.on_ready = on_ready
        self.parent_pid = parent_pid
        self.stop = threading.Event()
        self.building = False
        """True while a batch runs or the models load (a signal then interrupts it)"""
        self.settling = Settling(settings.watch_quiet_s, settings.watch_hold_s)
        self._owed = True  # the catch-up batch of the start, or a failed one
        self._failures = 0
        self._retry_at = 0.0
        self._ready = False
        self._shown: set[tuple[str, str, str]] = set()

    def run(self) -> None:
        """Watch until stopped. The first batch (the catch-up) runs once watching
        has begun, so that no change made while it runs is missed."""
        from watchfiles import watch

        for changes in watch(
            self.real_root,
            watch_filter=ignores(self.real_root),
            debounce=int(self.settings.watch_max_wait_s * 1000),
            step=STEP_MS,
            stop_event=self.stop,
            rust_timeout=max(STEP_MS, int(self.settings.watch_quiet_s * 1000)),
            yield_on_timeout=True,
            raise_interrupt=False,
            force_polling=self.poll,
            poll_delay_ms=self.settings.watch_poll_ms,
            ignore_permission_denied=True,
        ):
            if self.parent_pid is not None and os.getppid() != self.parent_pid:
                break  # the process that started this one is gone
            now = time.monotonic()
            self.settling.changed((Path(p) for _, p in changes), now)
            if now >= self._retry_at and (self._owed or self.settling.pending):
                self._maybe_apply(now)
            if self.stop.is_set():
                break

    def _maybe_apply(self, now: float) -> None:
        ready, waiting = self.settling.review(now, look)
        if not ready and not self._owed:
            return
        if waiting and now - self.settling.oldest_change() < self.settings.watch_max_wait_s:
            return  # part of the burst is still being written: wait for it
        notes = (p for p in waiting if p.suffix.lower() in MARKDOWN_SUFFIXES)
        held = {s for s in (stored_path(self.real_root, p) for p in notes) if s}
        first = min((self.settling.pending[p].first_change for p in ready), default=None)
        self._apply(ready, held, first)
        if not self._ready and not self._owed:
            self._load_models()
            self._ready = True
            self.on_ready()

    def _apply(self, ready: list[Path], held: set[str], first: float | None) -> None:
        start = time.monotonic()
        self.building = True
        try:
            report = self.rebuilder.run(self.root, hold=held)
        except (RebuildError, CorpusError, DatabaseUnavailable) as exc:
            if self.stop.is_set():  # the signal interrupted a statement: it failed
                raise KeyboardInterrupt from None
            self._failures += 1
            delay = min(MAX_RETRY_S, 2.0 ** (self._failures - 1))
            self._retry_at = time.monotonic() + delay
            self._owed = True  # the changes stay pending: tried again, whole
            self.on_batch(
                Batch(
                    datetime.now(),
                    time.monotonic() - start,
                    len(ready),
                    None,
                    None,
                    str(exc),
                    delay,
                )
            )
            return
        finally:
            self.building = False
        end = time.monotonic()
        self._owed, self._failures = False, 0
        self.settling.done(ready)
        self.on_batch(
            Batch(
                datetime.now(),
                end - start,
                len(ready),
                None if first is None else end - first,
                report,
                problems=self._to_show(report, held),
            )
        )

    def _to_show(self, report: BuildReport, held: set[str]) -> list[Problem]:
        """The problems of the notes a batch read or held, and any not shown before
        (a duplicate vendor folder is told once, not at every batch)."""
        touched = held | {p for paths in report.notes.values() for p in paths}
        shown = []
        for p in report.problems:
            key = (p.path, p.kind, p.message)
            if p.path in touched or key not in self._shown:
                shown.append(p)
            self._shown.add(key)
        return shown

    def _load_models(self) -> None:
        """Both models loaded and used once, so the first saved note is as quick as
        the next."""
        self.building = True
        try:
            self.rebuilder.embedder().prepare()
            self.rebuilder.extractor().extract(
                "Acme opened an office in Paris.", ExtractionContext()
            )
        finally:
            self.building = False


@contextlib.contextmanager
def stop_on_signals(watcher: Watcher) -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM stop ``watcher``: between batches at once, during a batch
    (or while its models load) by interrupting it (``KeyboardInterrupt``). Yields
    the list the signals received are appended to."""
    received: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        watcher.stop.set()
        if watcher.building:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
