"""Explorer sessions: an API key entered once, remembered by an opaque token.

The browser holds only a random 256-bit token, in an HttpOnly, SameSite=Strict
cookie (Secure over https); the server keeps token -> key in memory, under the
token's SHA-256. The key is never sent back to the browser, so a copy of the
cookie jar is worth a session (8 hours since its last use, or until sign-out or
a server restart), not the key. Every request is still admitted with the key by
the gate (:class:`server.auth.Gate`), so a revoked key is refused on the next
request, and the session is dropped then.

Sessions live in one server process: behind a round-robin proxy over several
replicas, send the key as a header (``Authorization: Bearer``) or route a
browser to one replica (docs/explorer.md).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict

COOKIE = "kb_session"
#: seconds a session lasts after its last use
IDLE_S = 8 * 3600
#: sessions kept at most; the least recently used goes first
MAX_SESSIONS = 10_000


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Sessions:
    """Opaque session tokens -> API keys, in memory, expiring when idle.

    >>> s = Sessions()
    >>> token = s.open("kb_secret")
    >>> s.key(token), s.key("forged")
    ('kb_secret', None)
    >>> s.close(token); s.key(token) is None
    True
    """

    def __init__(self, idle_s: float = IDLE_S, max_sessions: int = MAX_SESSIONS) -> None:
        self.idle_s = idle_s
        self.max_sessions = max_sessions
        self._keys: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._keys)

    def open(self, key: str) -> str:
        """A new session for ``key``; its token (for the cookie)."""
        token = secrets.token_urlsafe(32)
        self._keys[_digest(token)] = (key, time.monotonic() + self.idle_s)
        while len(self._keys) > self.max_sessions:
            self._keys.popitem(last=False)
        return token

    def key(self, token: str | None) -> str | None:
        """The key of a live session (its idle time starts again), or None."""
        if not token or len(token) > 200:
            return None
        found = _digest(token)
        entry = self._keys.get(found)
        if entry is None:
            return None
        key, expires = entry
        now = time.monotonic()
        if expires < now:
            del self._keys[found]
            return None
        self._keys[found] = (key, now + self.idle_s)
        self._keys.move_to_end(found)
        return key

    def close(self, token: str | None) -> None:
        """End a session (sign-out, or its key was refused)."""
        if token:
            self._keys.pop(_digest(token), None)
