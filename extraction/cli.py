"""``python -m extraction``: build and inspect the knowledge base.

Every failure a user can cause (bad path, unreachable database, wrong model,
bad environment variable) ends in one ``error:`` line naming what to fix and a
non-zero exit code; tracebacks are for bugs only.

The module is long (about 520 lines) because it holds the arguments, help and one-line
errors of every command of ``python -m extraction``; what each command does lives in
:mod:`extraction.rebuild`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from pydantic import ValidationError
from rich.console import Console

from extraction.settings import BUNDLED_SAMPLE, ExtractionSettings
from sql.cli import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    CommandLine,
    open_configured_database,
    run_command_line,
    settings_error,
)

#: Longest text ``extract`` takes: spaCy's ``nlp.max_length`` (longer texts raise).
EXTRACT_MAX_CHARS = 1_000_000

if TYPE_CHECKING:  # imported where used: --help stays fast
    from search.embedder import EmbeddingSettings


def _environment_help() -> str:
    """The variables of the extraction stage, from their settings models."""
    from search.embedder import EmbeddingSettings
    from sql.settings import OTHER_VARIABLES, DatabaseSettings, environment_help

    return environment_help(
        DatabaseSettings, ExtractionSettings, EmbeddingSettings, other=OTHER_VARIABLES
    )


def _parser() -> argparse.ArgumentParser:
    cli = CommandLine(
        "python -m extraction",
        "Turn a folder of markdown vendor notes into a searchable knowledge base in "
        "PostgreSQL: chunks with embeddings and full text, plus a per-vendor graph of "
        "entities and typed relationships.",
        _environment_help(),
    )
    command = cli.command

    def add_build(name: str, help_text: str, path_required: bool) -> argparse.ArgumentParser:
        p = command(name, help_text)
        p.add_argument(
            "path",
            nargs=None if path_required else "?",
            type=Path,
            help="folder of notes (vendors/<Vendor>/<topic>.md), one vendor folder, or one file"
            + ("" if path_required else "; default: $KB_CORPUS or the bundled sample corpus"),
        )
        p.add_argument("--json", action="store_true", help="print the summary as JSON")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.add_argument(
            "--workers",
            type=_workers,
            default="auto",
            metavar="N",
            help="start N local worker processes for the embed and extract work (0: this "
            "process does it; default auto: one per core when there are "
            "KB_AUTO_WORKERS_MIN_CHUNKS or more to embed and extract, so embedding and spaCy "
            "overlap); 'python -m extraction "
            "worker' on other machines helps either way",
        )
        return p

    add_build(
        "rebuild-graph",
        "Sync the knowledge base with a notes folder: add new and changed notes, remove "
        "deleted ones, and rebuild the graph of every affected vendor. Unchanged notes are "
        "not re-embedded or re-parsed.",
        path_required=False,
    )
    add_build(
        "ingest",
        "Add or update the notes under PATH without removing anything else.",
        path_required=True,
    )

    watch = command(
        "watch",
        "Follow a notes folder: apply each saved change as it happens.",
        "Watch a notes folder and apply its added, changed, moved and deleted notes "
        "through the same incremental rebuild as rebuild-graph (one transaction and one "
        "build record per batch; every server learns of each build), with the models "
        "loaded once and kept. Changes are gathered until the folder has been quiet for "
        "KB_WATCH_QUIET_S; a note still being written, or one that looks cut short, waits "
        "and is never applied half-written; a note with bad front matter is applied "
        "without it and reported as a problem. Hidden files and the temporary, swap and "
        "backup files editors write are ignored. On start, and after a failed batch, the "
        "folder is compared with the database, so nothing changed while the watcher was "
        "stopped or killed is lost. One line per applied batch on stdout: what changed, "
        "how long it took, problems. Ctrl-C or SIGTERM stop it between batches at once; "
        "during a batch they roll it back, and the next start applies it. On network "
        "drives (NFS, SMB), where change notifications do not arrive, use --poll.",
    )
    watch.add_argument(
        "path",
        nargs="?",
        type=Path,
        help="folder of notes (vendors/<Vendor>/<topic>.md), its vendors/ folder or one "
        "vendor folder; default: $KB_CORPUS or the bundled sample corpus",
    )
    watch.add_argument(
        "--poll",
        action="store_true",
        help="look for changes by scanning the folder every KB_WATCH_POLL_MS instead of "
        "file-system notifications (network drives, some containers; also KB_WATCH_POLL=1)",
    )
    watch.add_argument(
        "--json", action="store_true", help="one JSON object per line: start, batches, stop"
    )
    watch.add_argument(
        "--parent-pid",
        type=_build_id,
        default=None,
        metavar="PID",
        help="stop when process PID is no longer this one's parent (python -m server "
        "--watch passes its own)",
    )

    worker = command(
        "worker",
        "Do embed and extract work for rebuilds, on this or any machine with DATABASE_URL.",
        "Claim the embed and extract units of running rebuilds on the configured database "
        "and compute them (a rebuild queues them; see docs/deploy.md). Runs until stopped "
        "(Ctrl-C or SIGTERM give the unit in hand back at once); a worker killed outright "
        "loses nothing: its unit is claimed again when its lease (KB_WORKER_LEASE_S) runs "
        "out. Only units of rebuilds made with this worker's models and extractor version "
        "are claimed.",
    )
    worker.add_argument(
        "--build",
        type=_build_id,
        default=None,
        metavar="ID",
        help="work for this build only and exit when its units are all done",
    )
    worker.add_argument(
        "--until-idle", action="store_true", help="exit when no unit is left to claim"
    )
    worker.add_argument(
        "--prefer",
        choices=["embed", "extract"],
        default="embed",
        help="kind of unit to take first while there are both (default embed; the local "
        "workers of rebuild-graph --workers N take turns, so embedding and spaCy overlap)",
    )
    worker.add_argument("--quiet", action="store_true", help="no line per unit")
    worker.add_argument("--json", action="store_true", help="print the summary as JSON")

    status = command("status", "What the knowledge base holds, by vendor, and its last builds.")
    status.add_argument(
        "--vendors",
        type=int,
        default=20,
        metavar="N",
        help="show the N largest vendors (default 20, 0 for all)",
    )
    status.add_argument("--json", action="store_true", help="print as JSON")

    command(
        "stop-db",
        "Stop the embedded PostgreSQL server (it keeps running between commands).",
        "Stop the embedded PostgreSQL server in KB_PGDATA if it is running. "
        "Does nothing when DATABASE_URL is set.",
    )

    extract = command(
        "extract",
        "Run entity and relationship extraction on one text and print the result.",
        "Run entity and relationship extraction (the pipeline's own code path) on one "
        "text: a file, or standard input with '-'.",
    )
    extract.add_argument(
        "file",
        nargs="?",
        default="-",
        help="text or markdown file, or - for stdin (at most 1,000,000 characters)",
    )
    extract.add_argument("--vendor", help="vendor the text is about (seeds the entity ruler)")
    extract.add_argument("--json", action="store_true", help="print JSON (default: tables)")

    return cli.parser


#: Commands that now live elsewhere -> the command to run instead.
MOVED = {"eval": "python -m evals extraction", "eval-graph": "python -m evals graph"}


def main(argv: Sequence[str] | None = None) -> int:
    return run_command_line(
        argv,
        _parser,
        _run,
        moved=MOVED,
        interrupted="[bold red]interrupted[/]: nothing half-done was published",
    )


def _run(args: argparse.Namespace) -> int:
    if args.command in ("rebuild-graph", "ingest"):
        return _cmd_build(args)
    if args.command == "status":
        return _cmd_status(args)
    if args.command == "worker":
        return _cmd_worker(args)
    if args.command == "watch":
        return _cmd_watch(args)
    if args.command == "stop-db":
        return _cmd_stop_db()
    if args.command == "extract":
        return _cmd_extract(args)
    raise CliError(f"unknown command {args.command}", EXIT_USAGE)


def _workers(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number or auto") from None
    if not 0 <= value <= 64:
        raise argparse.ArgumentTypeError(f"{value} is out of range (0 to 64)")
    return value


def _build_id(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a build id (a whole number from 1)")
    return int(text)


def _settings_and_path(
    args: argparse.Namespace,
) -> tuple[ExtractionSettings, EmbeddingSettings, Path]:
    """The settings a build reads, and the notes it reads (the command's PATH, else
    KB_CORPUS, else the bundled sample); a bad setting or a missing path is a usage error."""
    from search.embedder import EmbeddingSettings

    try:
        settings = ExtractionSettings()
        embedding = EmbeddingSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None
    path: Path = args.path or settings.corpus or BUNDLED_SAMPLE
    if not path.exists():
        raise CliError(f"{path}: no such file or folder", EXIT_USAGE)
    return settings, embedding, path


def _cmd_build(args: argparse.Namespace) -> int:
    from extraction.notes.corpus import CorpusError
    from extraction.rebuild.pipeline import Rebuilder, RebuildError
    from extraction.rebuild.progress import RichProgress
    from extraction.rebuild.report import render_build_report
    from search.errors import EmbeddingConfigError
    from sql import DatabaseError

    settings, embedding, path = _settings_and_path(args)
    console = Console(stderr=True)
    db = open_configured_database()
    try:
        with RichProgress(console, enabled=not (args.quiet or args.json)) as progress:
            rebuilder = Rebuilder(
                db,
                settings=settings,
                embedding_settings=embedding,
                progress=progress,
                workers=args.workers,
            )
            report = rebuilder.run(path, delete_missing=args.command == "rebuild-graph")
    except (CorpusError, RebuildError, DatabaseError, EmbeddingConfigError) as exc:
        raise CliError(str(exc)) from None
    if args.json:
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render_build_report(Console(), report, db.description)
    return EXIT_OK


def _cmd_watch(args: argparse.Namespace) -> int:
    import os
    import signal

    from extraction.rebuild.pipeline import Rebuilder
    from extraction.rebuild.watch import Batch, Watcher, stop_on_signals
    from search.errors import EmbeddingConfigError
    from sql import DatabaseError

    settings, embedding, path = _settings_and_path(args)
    if not path.is_dir():
        raise CliError(
            f"{path}: watch follows a folder (a corpus, its vendors/ folder or one vendor "
            "folder), not a file",
            EXIT_USAGE,
        )
    poll = args.poll or settings.watch_poll
    mode = f"polling every {settings.watch_poll_ms} ms" if poll else "file-system notifications"

    def emit(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()  # a pipe (python -m server --watch) is read line by line

    def emit_json(event: str, **fields: object) -> None:
        emit(orjson.dumps({"event": event, **fields}).decode())

    def on_batch(batch: Batch) -> None:
        if args.json:
            emit(orjson.dumps(batch.to_dict()).decode())
        elif batch.error or batch.problems or (batch.report and not batch.report.up_to_date):
            for line in batch.lines():
                emit(line)

    db = open_configured_database()

    def on_ready() -> None:
        if args.json:
            emit_json("watching", root=str(path), mode=mode, pid=os.getpid())
        else:
            stops = "" if args.parent_pid else "; Ctrl-C stops"
            emit(f"watching {path} ({mode}) for {db.description}{stops}")

    rebuilder = Rebuilder(db, settings=settings, embedding_settings=embedding, workers="auto")
    watcher = Watcher(
        rebuilder,
        path,
        settings,
        on_batch=on_batch,
        on_ready=on_ready,
        poll=poll,
        parent_pid=args.parent_pid,
    )
    if not args.json:
        emit(f"comparing {path} with {db.description} ...")
    received: list[int] = []
    try:
        with stop_on_signals(watcher) as received:
            watcher.run()
    except KeyboardInterrupt:
        code = 143 if received and received[-1] == signal.SIGTERM else 130
        if args.json:
            emit_json("stopped", during_batch=True)
        else:
            emit("stopped during a batch: nothing of it was published; the next start applies it")
        return code
    except (DatabaseError, EmbeddingConfigError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(
            f"cannot watch {path}: {exc}; on a network drive, or past the system's limit of "
            "watched folders (fs.inotify.max_user_watches), use --poll"
        ) from None
    except RuntimeError as exc:  # watchfiles' own failure (the folder went away...)
        raise CliError(f"watching {path} stopped: {exc}") from None
    if args.json:
        emit_json("stopped", during_batch=False)
    else:
        emit("stopped")
    return EXIT_OK


def _cmd_worker(args: argparse.Namespace) -> int:
    from extraction.rebuild.pipeline import Rebuilder
    from extraction.rebuild.work import UnitRunner
    from extraction.rebuild.workers import Stop, Worker, WorkerError, install_stop_on_sigterm
    from extraction.settings import ExtractionSettings
    from search.embedder import EmbeddingSettings
    from search.errors import EmbeddingConfigError
    from sql import DatabaseError

    try:
        settings = ExtractionSettings()
        embedding = EmbeddingSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None
    err = Console(stderr=True)

    def say(line: str) -> None:
        err.print(line, markup=False, highlight=False, soft_wrap=True)

    db = open_configured_database()
    install_stop_on_sigterm()
    try:
        models = Rebuilder(db, settings=settings, embedding_settings=embedding)
        # loaded before the first claim: a missing model fails here, not mid-unit
        models.embedder().prepare()
        models.extractor()
        runner = UnitRunner(models.vectors, models.embedder, models.extractor)
        worker = Worker(
            db,
            runner,
            models.models_used(),
            lease_s=settings.worker_lease_s,
            prefer=args.prefer,
            log=(lambda line: None) if args.quiet else say,
        )
        if not args.quiet:
            say(f"worker {worker.name} on {db.description}: waiting for units")
        report = worker.run(args.build, until_idle=args.until_idle)
    except Stop:
        say("stopped: a unit in hand was given back")
        return 143
    except KeyboardInterrupt:
        say("interrupted: a unit in hand was given back")
        return 130
    except (WorkerError, DatabaseError, EmbeddingConfigError) as exc:
        raise CliError(str(exc)) from None
    if args.json:
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    elif not args.quiet:
        say(
            f"worker {report.name}: {report.units['embed']} embed units "
            f"({report.chunks['embed']} chunks), {report.units['extract']} extract units "
            f"({report.chunks['extract']} chunks) in {report.seconds:.1f} s"
            + (f", {report.dropped} dropped (claimed again)" if report.dropped else "")
            + (f", {report.reconnects} reconnects" if report.reconnects else "")
        )
    return EXIT_OK


def _cmd_status(args: argparse.Namespace) -> int:
    from extraction.rebuild.report import collect_status, render_status

    if args.vendors < 0:
        raise CliError("--vendors must be 0 or more", EXIT_USAGE)
    db = open_configured_database()
    status = collect_status(db, vendor_limit=args.vendors or None)
    if args.json:
        sys.stdout.write(orjson.dumps(status, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render_status(Console(), status)
    return EXIT_OK


def _cmd_stop_db() -> int:
    from sql.embedded import stop_embedded
    from sql.settings import DatabaseSettings

    try:
        settings = DatabaseSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None
    console = Console()
    if settings.database_url is not None:
        console.print("DATABASE_URL is set: there is no embedded server to stop.")
        return EXIT_OK
    pgdata = settings.pgdata.expanduser()
    if stop_embedded(pgdata):
        console.print(f"Stopped the embedded PostgreSQL in {pgdata}.")
    else:
        console.print(f"No embedded PostgreSQL is running in {pgdata}.")
    return EXIT_OK


def _read_text_arg(name: str) -> str:
    limit = 4 * EXTRACT_MAX_CHARS  # bytes: UTF-8 takes at most 4 per character
    if name == "-":
        data = sys.stdin.buffer.read(limit + 1)
        where = "standard input"
    else:
        p = Path(name)
        if not p.is_file():
            if p.exists():
                reason = "not a regular file"
            elif p.is_symlink():
                reason = "broken symlink or symlink loop"
            else:
                reason = "no such file"
            raise CliError(f"{name}: {reason}", EXIT_USAGE)
        try:
            with p.open("rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise CliError(f"{name}: cannot read ({exc.strerror})") from None
        where = name
    if len(data) > limit:
        raise CliError(f"{where}: over {limit:,} bytes; split the text", EXIT_USAGE)
    if b"\x00" in data:
        raise CliError(f"{where}: binary data (NUL bytes), not text", EXIT_USAGE)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(
            f"{where}: not UTF-8 (first bad byte at offset {exc.start}); convert it to UTF-8",
            EXIT_USAGE,
        ) from None
    if len(text) > EXTRACT_MAX_CHARS:
        raise CliError(
            f"{where}: {len(text):,} characters, over the {EXTRACT_MAX_CHARS:,} that one "
            "extraction reads; split the text",
            EXIT_USAGE,
        )
    return text


def _cmd_extract(args: argparse.Namespace) -> int:
    text = _read_text_arg(args.file)  # a file that is not text is refused before spaCy loads

    from extraction.models import ExtractionContext
    from extraction.nlp.extractor import Extractor
    from extraction.rebuild.report import extraction_to_dict, render_extraction

    context = ExtractionContext(vendor=args.vendor.strip() if args.vendor else None)
    result = Extractor.load().extract(text, context)
    data = extraction_to_dict(result)
    if args.json:
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render_extraction(Console(), data)
    return EXIT_OK
