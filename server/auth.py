"""API keys and rate limits, shared by every server on one database.

Keys are 256-bit random tokens (``kb_...``) stored in PostgreSQL as SHA-256
hashes (there is nothing to brute-force, so a plain hash is enough), never
logged. :class:`KeyStore` is what ``python -m server keys create|list|revoke``
acts on; it also keeps the secret that signs pagination cursors, so a cursor
issued by one replica continues on another.

:class:`Gate` admits a call with one statement (``kb_admit``, migration 0009):
it finds the key's active record and takes a token from each rate-limit tier
under the bucket's row lock. Nothing about keys is cached in a server, so a
key revoked through any replica is refused by the next call everywhere, and a
new key works at once; the limits are exact across replicas and use the
database's clock, so the servers' clocks need not agree.

Key files of earlier versions (``KB_API_KEYS_FILE``) are imported once by
:meth:`KeyStore.import_file`, which renames them ``*.imported``.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import orjson
import psycopg
from psycopg.rows import class_row
from psycopg_pool import PoolTimeout

from server.errors import ErrorCode, ToolFailure
from server.ratelimit import TIERS, Decision
from sql.database import Database, redact
from sql.errors import DatabaseUnavailable
from sql.queries import queries

KEY_PREFIX = "kb_"
MAX_KEY_CHARS = 200
CURSOR_SECRET = "cursor"


class KeyStoreError(Exception):
    """A key cannot be created, revoked or imported (the message says why)."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    name: str
    key_id: str
    created: datetime
    revoked: datetime | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """An admitted call: whose key, and the rate-limit decision."""

    key_id: str
    name: str
    decision: Decision


@dataclass(frozen=True, slots=True)
class ImportReport:
    path: Path
    imported: int
    skipped: int
    moved_to: Path | None


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _unavailable(db: Database, exc: psycopg.Error) -> DatabaseUnavailable:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DatabaseUnavailable(f"the key store in {db.description} is unavailable: {redact(first)}")


class KeyStore:
    """API keys and server secrets in the knowledge base ``db``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, name: str) -> str:
        """A new key for ``name``; the key itself is returned once and never stored."""
        name = name.strip()
        if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
            raise KeyStoreError("a key name is 1-64 letters, digits, '-', '_' or '.'")
        q = queries()
        with self._connect() as conn:
            for _ in range(3):  # a key id is 8 hex digits of the hash: retry a clash
                key = KEY_PREFIX + secrets.token_urlsafe(32)
                hashed = digest(key)
                try:
                    conn.execute(
                        q["create_api_key"], {"key_id": hashed[:8], "name": name, "digest": hashed}
                    )
                    return key
                except psycopg.errors.UniqueViolation as exc:
                    if exc.diag.constraint_name == "api_keys_active_name":
                        raise KeyStoreError(
                            f"an active key named {name!r} exists; revoke it first"
                        ) from None
        raise KeyStoreError("could not draw an unused key id; try again")

    def revoke(self, name_or_id: str) -> KeyRecord:
        """Revoke the active key of that name (or id); refused from the next call on."""
        with self._connect() as conn:
            revoking = conn.cursor(row_factory=class_row(KeyRecord))
            record = revoking.execute(queries()["revoke_api_key"], {"who": name_or_id}).fetchone()
        if record is None:
            raise KeyStoreError(f"no active key named or with id {name_or_id!r}")
        return record

    def records(self) -> list[KeyRecord]:
        with self._connect() as conn:
            listing = conn.cursor(row_factory=class_row(KeyRecord))
            return listing.execute(queries()["list_api_keys"]).fetchall()

    def active_count(self) -> int:
        with self._connect() as conn:
            row = conn.execute(queries()["count_active_api_keys"]).fetchone()
        return int(row["n"]) if row else 0

    def cursor_secret(self) -> bytes:
        """The secret every replica signs cursors with (made by the first to ask)."""
        return self._secret(CURSOR_SECRET, secrets.token_bytes(32))

    def _secret(self, name: str, candidate: bytes) -> bytes:
        with self._connect() as conn:
            # a replica that inserted it after this statement's snapshot began makes
            # the insert do nothing and the read miss it: the next attempt sees it
            for _ in range(3):
                row = conn.execute(
                    queries()["server_secret"], {"name": name, "value": candidate}
                ).fetchone()
                if row is not None:
                    return bytes(row["value"])
        raise DatabaseUnavailable(f"the server secret {name!r} could not be read")

    def import_file(self, path: Path) -> ImportReport | None:
        """Import a key file of an earlier version once: its hashed keys (revoked
        ones stay revoked) and its cursor secret, when the database has none yet.
        The file is then renamed ``<name>.imported``; None when there is no file.
        Keys already in the database, or whose active name is taken, are skipped."""
        if not path.is_file():
            return None
        try:
            data = orjson.loads(path.read_bytes())
            records = data.get("keys", [])
            secret = bytes.fromhex(data.get("cursor_secret", ""))
            rows = [
                {
                    "key_id": str(r["key_id"]),
                    "name": str(r["name"]),
                    "digest": str(r["digest"]),
                    "created": str(r["created"]),
                    "revoked": bool(r.get("revoked", False)),
                }
                for r in records
            ]
        except OSError as exc:
            raise KeyStoreError(f"cannot read {path}: {exc.strerror}") from None
        except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError, KeyError):
            raise KeyStoreError(f"{path} is not a key file written by this server") from None
        imported = 0
        with self._connect() as conn, conn.transaction():
            for row in rows:
                imported += conn.execute(queries()["import_api_key"], row).rowcount
            if len(secret) >= 16:
                conn.execute(queries()["server_secret"], {"name": CURSOR_SECRET, "value": secret})
        moved: Path | None = path.with_name(path.name + ".imported")
        try:
            os.replace(path, moved)  # type: ignore[arg-type]
        except OSError:
            moved = None  # importing again adds nothing: every row is already there
        return ImportReport(path, imported, len(rows) - imported, moved)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return self.db.connect(autocommit=True)
        except DatabaseUnavailable:
            raise
        except psycopg.Error as exc:
            raise _unavailable(self.db, exc) from None


class Gate:
    """Authentication and rate limits for every call: one statement each.

    ``limits`` are tokens per tier (``minute``, ``hour``, ``day``). The gate keeps
    a small pool of its own, so an admission never waits for a connection behind
    long searches (a cached answer needs nothing else from the database).

    Speed layer ``async-commit`` (``KB_PLAIN_PATHS``): the pool's connections
    commit the bucket update without waiting for its WAL to reach the disk
    (``synchronous_commit = off``). An admission took 0.30 ms against 0.52 on the
    embedded server (median of 1,000, 2026-11-26); the floor of a cached call is
    about one admission. What it risks: if PostgreSQL itself crashes, the token
    takes of its last few hundred milliseconds are forgotten (a key gets those
    calls back). Visibility and locking are unchanged, so the limits still hold
    exactly across replicas, and keys and revocations are written elsewhere,
    with the default commit.
    """

    def __init__(
        self,
        db: Database,
        limits: dict[str, int],
        *,
        pool_size: int = 2,
        async_commit: bool = True,
    ) -> None:
        self.db = db
        self.limits = [float(limits[tier]) for tier, _ in TIERS]
        self.pool = db.pool(
            min_size=1,
            max_size=pool_size,
            autocommit=True,
            check=False,
            session=(("synchronous_commit", "off"),) if async_commit else (),
        )

    def close(self) -> None:
        self.pool.close()

    def admit(self, presented: str | None) -> Admission:
        """The key's record and decision, or the contract's AUTH_REQUIRED,
        AUTH_INVALID or RATE_LIMIT failure (a DatabaseError when unreachable)."""
        if presented is None or not presented.strip():
            raise ToolFailure(
                ErrorCode.AUTH_REQUIRED,
                "Authentication required. API key must be provided (BMCIS_API_KEY not set).",
            )
        row: dict[str, Any] | None = None  # the pool's connections give dict rows
        params = {"digest": digest(presented.strip()[:MAX_KEY_CHARS]), "limits": self.limits}
        # one database timeout in all, however the two attempts share it
        deadline = time.monotonic() + self.db.connect_timeout
        for attempt in (1, 2):
            try:
                wait = max(0.05, deadline - time.monotonic())
                with self.pool.connection(timeout=wait) as conn:
                    row = cast(
                        "dict[str, Any] | None", conn.execute(queries()["admit"], params).fetchone()
                    )
                break
            except psycopg.OperationalError as exc:
                # the pool does not test a connection before handing it out (a
                # round trip per call); one that broke while idle is dropped when
                # it comes back, and the second attempt takes a fresh one
                if attempt == 2 or isinstance(exc, PoolTimeout):
                    raise _unavailable(self.db, exc) from None
            except psycopg.Error as exc:
                raise _unavailable(self.db, exc) from None
        if row is None:
            raise ToolFailure(
                ErrorCode.AUTH_INVALID, "Invalid API key. Please check your credentials."
            )
        decision = Decision(
            bool(row["allowed"]),
            dict(zip((t for t, _ in TIERS), row["remaining"], strict=True)),
            math.ceil(row["wait_s"]),
        )
        if not decision.allowed:
            raise ToolFailure(
                ErrorCode.RATE_LIMIT,
                "Rate limit exceeded",
                {
                    "remaining": decision.remaining,
                    "reset_in_seconds": decision.reset_in_seconds,
                },
            )
        return Admission(row["key_id"], row["key_name"], decision)
