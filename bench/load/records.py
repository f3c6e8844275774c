"""What one call was: the tools, the outcomes, a call's :class:`CallRecord`, and the
:class:`Answer` read from a tool result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_types import CallToolResult

TOOLS = (
    "semantic_search",
    "find_vendor_info",
    "get_chunk",
    "list_vendors",
    "find_entity_path",
    "get_entity_neighbors",
    "get_server_metrics",
)
OK = "ok"
INTENDED = "RATE_LIMIT"  # the only error code that may be intended, and only on the over-limit key
TIMEOUT = "TIMEOUT"
CANCELLED = "CANCELLED"
SESSION = "session"  # the pseudo-tool of a session that could not be opened or broke


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call as a client saw it. ``start`` and ``end`` are wall-clock seconds (epoch,
    comparable across processes), ``latency_ms`` from a monotonic clock. ``outcome`` is
    ``ok``, the envelope's ``error.code``, ``TIMEOUT``, ``CANCELLED`` or the exception type
    of a transport failure. ``over_limit``: made with the deliberately exhausted key."""

    client: int
    tool: str
    mode: str
    variant: str
    start: float
    end: float
    latency_ms: float
    outcome: str
    cache_hit: bool | None = None
    over_limit: bool = False
    server_ms: float | None = None
    """``execution_context.execution_time_ms``: the time inside the server's tool code"""

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    @property
    def intended(self) -> bool:
        """An error the benchmark asked for: RATE_LIMIT on the exhausted key."""
        return self.over_limit and self.outcome == INTENDED


@dataclass(frozen=True, slots=True)
class Answer:
    """What a call's result says: ``ok`` or the envelope's error code, the cache hit and
    server time of its ``execution_context``, and the envelope of a success."""

    outcome: str
    cache_hit: bool | None = None
    server_ms: float | None = None
    envelope: dict[str, Any] | None = None


def classify(result: CallToolResult) -> Answer:
    """The :class:`Answer` of a tool result."""
    env = result.structured_content
    if not isinstance(env, dict):
        return Answer("TOOL_ERROR" if result.is_error else "NO_STRUCTURED_CONTENT")
    context = env.get("execution_context")
    context = context if isinstance(context, dict) else {}
    ms = context.get("execution_time_ms")
    server_ms = float(ms) if isinstance(ms, int | float) else None
    error = env.get("error")
    if result.is_error or error:
        code = error.get("code") if isinstance(error, dict) else None
        return Answer(str(code) if code else "TOOL_ERROR", None, server_ms)
    hit = context.get("cache_hit")
    return Answer(OK, hit if isinstance(hit, bool) else None, server_ms, env)
