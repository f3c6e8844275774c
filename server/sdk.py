"""The one module that touches the MCP SDK's private internals: each function names the
internal it relies on and why, so an SDK upgrade has a single place to check."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.shared._httpx_utils import (
    MCP_DEFAULT_SSE_READ_TIMEOUT,
    MCP_DEFAULT_TIMEOUT,
    create_mcp_http_client,
)

# --- client side (benchmarks) ---


def http_timeouts() -> httpx2.Timeout:
    """The timeouts the SDK's HTTP transports use (``MCP_DEFAULT_TIMEOUT`` for connect,
    write and pool, ``MCP_DEFAULT_SSE_READ_TIMEOUT`` for reads, from the private
    ``mcp.shared._httpx_utils``), for a client that must build its own ``AsyncClient``
    (one that shares a TLS context, which ``create_mcp_http_client`` cannot take) and
    still behave as the SDK's own."""
    return httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)


def http_client(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The SDK transports' own HTTP client (``create_mcp_http_client`` of the private
    ``mcp.shared._httpx_utils``) with ``headers`` on every request: a benchmark's session
    is then configured exactly as a default streamable-HTTP client's."""
    return create_mcp_http_client(headers=headers)


_compiled: dict[tuple[str, str], Any] = {}  # (tool, schema) -> validator, for the process
_sharing = 0  # open share_output_schema_validator() blocks
_unshared: Callable[..., Any] | None = None  # the SDK's method while it is replaced
_lock = threading.Lock()


@contextmanager
def share_output_schema_validator() -> Iterator[None]:
    """While open, the client sessions of this process share compiled output-schema
    validators: ``ClientSession._output_schema_validator`` (private) is replaced by one
    that compiles each (tool, schema) once per process; on leaving the last open block
    the SDK's own method is restored. Blocks nest and may overlap across tasks.

    The SDK's client checks every answer against the tool's output schema with a
    validator it compiles, meta-schema check included (~40 ms of CPU), once per session
    and tool. A real client pays that once; a load generator running hundreds of
    sessions in a process would spend most of its CPU on it at the start of every phase.
    Every answer is still validated. Does nothing if the SDK no longer has the hook."""
    global _sharing, _unshared
    with _lock:
        if _sharing == 0:
            original = getattr(ClientSession, "_output_schema_validator", None)
            if original is not None:
                _unshared = original
                setattr(ClientSession, "_output_schema_validator", _shared(original))  # noqa: B010
        _sharing += 1
    try:
        yield
    finally:
        with _lock:
            _sharing -= 1
            if _sharing == 0 and _unshared is not None:
                setattr(ClientSession, "_output_schema_validator", _unshared)  # noqa: B010
                _unshared = None


def _shared(original: Callable[..., Any]) -> Callable[..., Any]:
    def shared(self: Any, name: str, output_schema: dict[str, Any]) -> Any:
        own = self._tool_output_validators.get(name)
        if own is not None:
            return own
        key = (name, json.dumps(output_schema, sort_keys=True))
        validator = _compiled.get(key)
        if validator is None:
            validator = _compiled[key] = original(self, name, output_schema)
        self._tool_output_validators[name] = validator
        return validator

    return shared
