"""Opaque pagination cursors, signed so that they cannot be forged or edited.

A cursor carries the offset of the next page, a digest of the query and every
parameter that shapes the result list, and the graph build it was issued on,
all under an HMAC-SHA256 tag. Used with other parameters, after a rebuild, or
altered in any byte, it is refused with a message that says what to do.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson


class CursorError(ValueError):
    """The cursor cannot be used."""


def digest(params: dict[str, Any]) -> str:
    """A short stable digest of the parameters a cursor is bound to."""
    return hashlib.sha256(orjson.dumps(params, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]


class CursorCodec:
    """
    >>> codec = CursorCodec(b"k" * 32)
    >>> token = codec.encode(offset=10, bound="abc", build_id=3)
    >>> codec.decode(token, bound="abc", build_id=3)
    10
    >>> codec.decode(token, bound="other", build_id=3)
    Traceback (most recent call last):
    ...
    server.cursor.CursorError: The cursor belongs to another query or other parameters: ...
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the cursor secret needs at least 16 bytes")
        self._secret = secret

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]

    def encode(self, *, offset: int, bound: str, build_id: int) -> str:
        payload = orjson.dumps({"o": offset, "q": bound, "b": build_id})
        return base64.urlsafe_b64encode(payload + self._tag(payload)).decode().rstrip("=")

    def decode(self, token: object, *, bound: str, build_id: int) -> int:
        if not isinstance(token, str) or not 8 <= len(token) <= 1_000:
            raise CursorError("The cursor is not one this server issued: omit it to start over.")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except ValueError:
            raise CursorError("The cursor is malformed: omit it to start over.") from None
        payload, tag = raw[:-16], raw[-16:]
        if len(raw) <= 16 or not hmac.compare_digest(tag, self._tag(payload)):
            raise CursorError("The cursor was altered or forged: omit it to start over.")
        data = orjson.loads(payload)
        if data["q"] != bound:
            raise CursorError(
                "The cursor belongs to another query or other parameters: repeat the call "
                "that returned it, changing only the cursor."
            )
        if data["b"] != build_id:
            raise CursorError(
                "The cursor is stale: the knowledge base was rebuilt since it was issued. "
                "Omit it to start over."
            )
        return int(data["o"])
