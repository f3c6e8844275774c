"""``python -m server``: the MCP server (stdio or streamable HTTP) and its API keys.

Every start-up failure (bad environment variable, no API keys, unreachable
database) is one ``error:`` line on stderr and a non-zero exit; stdout stays
the protocol's alone.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from sql.cli import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    CommandLine,
    open_configured_database,
    run_command_line,
    settings_error,
)

if TYPE_CHECKING:  # imported where used, so that --help stays fast
    from server.auth import KeyStore
    from server.settings import ServerSettings
    from server.watch import WatchProcess
    from sql.database import Database


def _environment_help() -> str:
    """Every variable the server reads, from the settings models."""
    from kg.settings import GraphSettings
    from search.embedder import EmbeddingSettings
    from search.settings import SearchSettings
    from server.settings import ServerSettings
    from sql.settings import DatabaseSettings, environment_help

    return environment_help(
        ServerSettings, DatabaseSettings, SearchSettings, GraphSettings, EmbeddingSettings
    )


def _parser() -> argparse.ArgumentParser:
    from server.tools import tool_list

    cli = CommandLine(
        "python -m server",
        "Serve the vendor knowledge base to MCP clients. Without a command, runs the server "
        "(stdio by default).\n\ntools (docs/tools.md has their parameters):\n" + tool_list(),
        _environment_help(),
        required=False,
    )
    parser = cli.parser
    parser.add_argument(
        "--transport",
        choices=("stdio", "streamable-http"),
        default="stdio",
        help="stdio for desktop clients (default) or streamable-http for shared deployments",
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address [127.0.0.1]")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port [8000]")
    parser.add_argument(
        "--http-response",
        choices=("json", "sse"),
        default="json",
        help="how streamable HTTP answers a call: one JSON body (default: faster, and the "
        "tools send nothing while they work) or an SSE stream",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="streamable HTTP without server-side sessions: any replica behind a "
        "round-robin proxy can answer any request (see docs/deploy.md)",
    )
    parser.add_argument(
        "--watch",
        type=Path,
        default=None,
        metavar="PATH",
        help="also follow the notes folder PATH (single-machine desktop setup): a watcher "
        "process beside the server (python -m extraction watch PATH, restarted if it "
        "ends, stopped with the server) applies each saved change, and the server answers "
        "from each new build as soon as it is published; its lines go to the server log",
    )
    parser.add_argument(
        "--local-explorer",
        action="store_true",
        help="streamable HTTP on a loopback address only: the web explorer at / answers "
        "this machine's browsers without a key (the server makes its own key, "
        "explorer-local-PORT; see docs/explorer.md)",
    )
    keys = cli.command(
        "keys",
        "create, list or revoke API keys",
        "Manage the API keys in the knowledge base's database (stored as SHA-256 hashes), "
        "shared by every server on it: a new key works at once, a revoked key is refused "
        "from the next call on, without restarting any server.",
    )
    ksub = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    create = ksub.add_parser("create", help="make a key; it is printed once and never stored")
    create.add_argument("name", help="who or what uses it (letters, digits, - _ .)")
    ksub.add_parser("list", help="names, ids, creation dates, revoked or not; never the keys")
    revoke = ksub.add_parser("revoke", help="revoke a key by name or id")
    revoke.add_argument("key", help="name or id (from `keys list`)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_command_line(argv, _parser, _run, interrupted=None)


def _run(args: argparse.Namespace) -> int:
    if args.command == "keys":
        return _keys(args)
    if not 1 <= args.port <= 65535:
        raise CliError(f"--port must be from 1 to 65535, not {args.port}", EXIT_USAGE)
    return _serve(args)


def _settings() -> ServerSettings:
    from server.settings import ServerSettings

    try:
        return ServerSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None


def _keystore(db: Database, keys_file: Path) -> KeyStore:
    """The database's key store, after importing a key file of an earlier version."""
    from server.auth import KeyStore, KeyStoreError

    store = KeyStore(db)
    try:
        report = store.import_file(keys_file)
    except KeyStoreError as exc:
        raise CliError(str(exc)) from None
    if report is not None:
        where = (
            f"renamed {report.moved_to.name}"
            if report.moved_to
            else "not renamed (importing it again adds nothing)"
        )
        Console(stderr=True).print(
            f"imported {report.imported} API key(s) from {report.path} into {db.description} "
            f"({report.skipped} already there); keys now live in the database, the file is "
            f"{where}",
            highlight=False,
            soft_wrap=True,
        )
    return store


def _keys(args: argparse.Namespace) -> int:
    from server.auth import KeyStoreError
    from sql import DatabaseError

    settings = _settings()
    store = _keystore(open_configured_database(), settings.keys_file)
    out = Console()
    try:
        if args.keys_command == "create":
            key = store.create(args.name)
            Console(stderr=True).print(
                f"created key {args.name!r} in {store.db.description}; it is shown once, here:",
                highlight=False,
                soft_wrap=True,
            )
            sys.stdout.write(key + "\n")
        elif args.keys_command == "revoke":
            record = store.revoke(args.key)
            out.print(f"revoked {record.name} ({record.key_id}); every server refuses it now")
        else:
            table = Table(title=f"API keys in {store.db.description}")
            for col in ("name", "id", "created", "state"):
                table.add_column(col)
            for r in store.records():
                state = f"revoked {r.revoked:%Y-%m-%d %H:%M}" if r.revoked else "active"
                table.add_row(r.name, r.key_id, f"{r.created:%Y-%m-%d %H:%M}", state)
            out.print(table)
    except (KeyStoreError, DatabaseError) as exc:
        raise CliError(str(exc)) from None
    return EXIT_OK


def _check_vector_space(db: Any, embedder: Any) -> None:
    """Refuse to serve a knowledge base embedded by another model: its queries
    would be compared with vectors of another space."""
    from sql.database import bound_model
    from sql.errors import ModelMismatch

    with db.connect() as conn:
        bound = bound_model(conn)
    if bound is not None and (bound.name, bound.dimension) != (
        embedder.info.name,
        embedder.info.dimension,
    ):
        raise ModelMismatch(
            f"{db.description} holds {bound.dimension}-d vectors from the embedding model "
            f"{bound.name!r}, but the configured model is {embedder.info.name!r} "
            f"({embedder.info.dimension}-d): configure the same model (KB_EMBEDDING_MODEL) "
            "or rebuild into a new database"
        )


def _serve(args: argparse.Namespace) -> int:
    from kg.settings import GraphSettings
    from search.embedder import Embedder, EmbeddingSettings
    from search.errors import EmbeddingConfigError
    from search.settings import SearchSettings
    from server.app import create_server
    from server.explorer import ExplorerConfig
    from server.service import Service
    from sql import DatabaseError

    if args.stateless and args.transport != "streamable-http":
        raise CliError("--stateless applies to --transport streamable-http only", EXIT_USAGE)
    if args.watch is not None and not args.watch.is_dir():
        raise CliError(f"--watch {args.watch}: not a folder of notes", EXIT_USAGE)
    if args.local_explorer:
        _check_local_explorer(args)
    settings = _settings()
    try:
        search_settings = SearchSettings()
        graph_settings = GraphSettings()
        embedding_settings = EmbeddingSettings()
    except ValidationError as exc:
        raise settings_error(exc) from None
    db = open_configured_database()
    store = _keystore(db, settings.keys_file)
    try:
        local_key = _local_key(store, args.port) if args.local_explorer else None
        active = store.active_count()
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    if not active:
        raise CliError(
            f"no API keys in {db.description}: create one with `python -m server keys create NAME`",
            EXIT_USAGE,
        )
    try:
        embedder = Embedder.from_settings(embedding_settings).prepare()
        _check_vector_space(db, embedder)
    except (EmbeddingConfigError, DatabaseError) as exc:
        raise CliError(str(exc)) from None

    watcher = _notes_watcher(args.watch, settings.log_level) if args.watch else None

    def make_service() -> Service:
        service = Service(
            settings,
            db,
            embedder=embedder,
            search_settings=search_settings,
            graph_settings=graph_settings,
            port=None if args.transport == "stdio" else args.port,
        )
        if watcher is not None:
            watcher.start()  # once the server's state is ready
        return service

    explorer = ExplorerConfig(host=args.host, local_key=local_key)
    server = create_server(settings, make_service, explorer)
    try:
        if args.transport == "stdio":
            server.run("stdio")
        else:
            _announce_explorer(args, explorer)
            server.run(
                "streamable-http",
                host=args.host,
                port=args.port,
                transport_security=explorer.security,
                max_request_body_size=settings.http_max_body_bytes,
                json_response=args.http_response == "json",
                stateless_http=args.stateless,
            )
    finally:
        if watcher is not None:
            watcher.stop()
    return EXIT_OK


def _notes_watcher(path: Path, log_level: str) -> WatchProcess:
    """The watcher of ``--watch``; its lines are logged at INFO unless the server
    logs only errors (LOG_LEVEL ERROR or CRITICAL)."""
    import logging

    from server.watch import WatchProcess

    level = logging.getLevelName(log_level)
    logging.getLogger("server.watch").setLevel(level if level > logging.WARNING else logging.INFO)
    return WatchProcess(path)


def _check_local_explorer(args: argparse.Namespace) -> None:
    """Local-only mode answers without a key: only over HTTP, only on loopback."""
    from server.explorer.web import LOOPBACK

    if args.transport != "streamable-http":
        raise CliError("--local-explorer applies to --transport streamable-http only", EXIT_USAGE)
    if args.host not in LOOPBACK:
        raise CliError(
            f"--local-explorer answers without a key, so it binds to this machine only "
            f"({', '.join(LOOPBACK)}), not {args.host}: drop it and sign in with a key",
            EXIT_USAGE,
        )


def _local_key(store: KeyStore, port: int) -> str:
    """The key local-only mode answers keyless requests with: made afresh at each
    start (explorer-local-PORT; the one of the previous start on this port is
    revoked), so it exists only in this process."""
    from server.auth import KeyStoreError

    name = f"explorer-local-{port}"
    with contextlib.suppress(KeyStoreError):  # none yet
        store.revoke(name)
    try:
        return store.create(name)
    except KeyStoreError as exc:
        raise CliError(str(exc)) from None


def _announce_explorer(args: argparse.Namespace, explorer: Any) -> None:
    """Where the explorer is (stderr: stdout is the protocol's)."""
    host = f"[{args.host}]" if ":" in args.host else args.host
    mode = (
        "local-only: no key needed on this machine"
        if explorer.local_key
        else "sign in with an API key"
    )
    Console(stderr=True).print(
        f"explorer: http://{host}:{args.port}/  ({mode}); MCP: http://{host}:{args.port}/mcp",
        highlight=False,
        soft_wrap=True,
    )
