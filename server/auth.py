"""API keys: stored as SHA-256 hashes, checked in constant time, never logged.

Keys are 256-bit random tokens (``kb_...``), so a plain SHA-256 is enough to
store them: there is nothing to brute-force. The key file (``KB_API_KEYS_FILE``)
also holds the secret that signs pagination cursors. ``python -m server keys
create|list|revoke`` manages it; it is written atomically with mode 0600.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from server.errors import ErrorCode, ToolFailure

KEY_PREFIX = "kb_"
MAX_KEY_CHARS = 200


class KeyFileError(Exception):
    """The key file cannot be read or written."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    name: str
    key_id: str
    digest: str
    created: str
    revoked: bool = False


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class KeyStore:
    """The key file: records and the cursor secret."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[KeyRecord] = []
        self.cursor_secret = b""

    @classmethod
    def load(cls, path: Path) -> KeyStore:
        store = cls(path)
        if not path.exists():
            return store
        try:
            data = orjson.loads(path.read_bytes())
            store.records = [KeyRecord(**r) for r in data.get("keys", [])]
            store.cursor_secret = bytes.fromhex(data.get("cursor_secret", ""))
        except OSError as exc:
            raise KeyFileError(f"cannot read {path}: {exc.strerror}") from None
        except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
            raise KeyFileError(f"{path} is not a key file written by this server") from None
        return store

    def save(self) -> None:
        if not self.cursor_secret:
            self.cursor_secret = secrets.token_bytes(32)
        payload: dict[str, Any] = {
            "keys": [asdict(r) for r in self.records],
            "cursor_secret": self.cursor_secret.hex(),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".keys-")
            with os.fdopen(fd, "wb") as out:
                out.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            raise KeyFileError(f"cannot write {self.path}: {exc.strerror}") from None

    def create(self, name: str) -> str:
        """A new key for ``name``; the key itself is returned once and never stored."""
        name = name.strip()
        if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
            raise KeyFileError("a key name is 1-64 letters, digits, '-', '_' or '.'")
        if any(r.name == name and not r.revoked for r in self.records):
            raise KeyFileError(f"an active key named {name!r} exists; revoke it first")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        record = KeyRecord(
            name=name,
            key_id=_digest(key)[:8],
            digest=_digest(key),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.records.append(record)
        self.save()
        return key

    def revoke(self, name_or_id: str) -> KeyRecord:
        for i, r in enumerate(self.records):
            if not r.revoked and name_or_id in (r.name, r.key_id):
                self.records[i] = KeyRecord(r.name, r.key_id, r.digest, r.created, True)
                self.save()
                return self.records[i]
        raise KeyFileError(f"no active key named or with id {name_or_id!r}")

    @property
    def active(self) -> list[KeyRecord]:
        return [r for r in self.records if not r.revoked]

    def identify(self, presented: str | None) -> KeyRecord:
        """The key's record, or the contract's AUTH_REQUIRED / AUTH_INVALID failure.

        Every active digest is compared (constant time each, no early exit), so the
        time taken does not tell which key came close.
        """
        if presented is None or not presented.strip():
            raise ToolFailure(
                ErrorCode.AUTH_REQUIRED,
                "Authentication required. API key must be provided (BMCIS_API_KEY not set).",
            )
        candidate = _digest(presented.strip()[:MAX_KEY_CHARS]).encode()
        found: KeyRecord | None = None
        for record in self.active:
            if hmac.compare_digest(candidate, record.digest.encode()):
                found = record
        if found is None:
            raise ToolFailure(
                ErrorCode.AUTH_INVALID, "Invalid API key. Please check your credentials."
            )
        return found
