"""The MCP SDK's internals the server relies on, each behind one function here.

The server is built on the SDK's public API (``MCPServer``, ``Context``, the
tool and resource decorators, the transports). What that API does not offer
(looking up a registered tool, its argument model and output schema, serving
given streams, a tool result in its wire form) reaches into the SDK's private
attributes or undocumented behaviour, here and nowhere else in ``server/``.

:data:`SUPPORTED_MCP` is the SDK version range these functions were written
and checked against. ``tests/server/test_sdk.py`` checks that the installed
SDK is in it and exercises every function against it, so an SDK upgrade that
moves one of these internals fails that test loudly rather than a client's
session.

Below the server's functions, after the ``client side`` line, are those the
benchmarks' clients use (``tests/server/test_sdk_client.py`` checks them): each
names the internal it relies on and why.

The tokenizer's private count (``bpe_openai``, not the SDK) stays with the one
module that uses the tokenizer: :func:`server.tokens.backend_count`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, cast

import httpx2
from mcp.client.session import ClientSession
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import (
    MCP_DEFAULT_SSE_READ_TIMEOUT,
    MCP_DEFAULT_TIMEOUT,
    create_mcp_http_client,
)
from pydantic import BaseModel

#: The SDK versions this adapter was written and checked for (tests/server/test_sdk.py).
SUPPORTED_MCP = ">=2.3,<2.4"


def registered_tool(server: MCPServer[Any], name: str) -> Tool | None:
    """The tool ``name`` as registered with ``server``, or None."""
    return server._tool_manager.get_tool(name)


def registered_tools(server: MCPServer[Any]) -> list[Tool]:
    """Every tool registered with ``server``."""
    return server._tool_manager.list_tools()


def argument_model(tool: Tool) -> type[BaseModel]:
    """The pydantic model the SDK validates ``tool``'s arguments with (its input schema)."""
    return tool.fn_metadata.arg_model


def output_schema(tool: Tool) -> dict[str, Any] | None:
    """The output schema ``tool`` is published with (None: unstructured)."""
    return tool.fn_metadata.output_schema


def publish_output_schema(tool: Tool, schema: dict[str, Any]) -> None:
    """Publish ``tool`` with ``schema`` as its output schema. The SDK still checks
    answers against the return annotation's model, not against ``schema``."""
    tool.fn_metadata.output_schema = schema
    tool.__dict__.pop("output_schema", None)  # Tool.output_schema is a cached copy


def answerable_directly(tool: Tool) -> bool:
    """Whether a call of ``tool`` needs nothing from the SDK but its validated
    arguments and the request's :class:`~mcp.server.mcpserver.Context`: the tool
    takes a Context and no parameter is filled by a resolver."""
    return tool.context_kwarg is not None and not tool.resolved_params


def stdio_transport(
    stdin: AsyncIterator[str] | None, stdout: Any
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """The SDK's stdio transport over ``stdin`` and ``stdout`` (None: the
    process's own, through worker threads). The SDK only iterates ``stdin``'s
    lines and awaits ``stdout.write(text)`` and ``stdout.flush()``, though it
    annotates both as ``anyio.AsyncFile``."""
    return stdio_server(cast(Any, stdin), cast(Any, stdout))


async def serve(server: MCPServer[Any], read_stream: Any, write_stream: Any) -> None:
    """Serve one MCP session of ``server`` over a transport's two streams, as
    :meth:`MCPServer.run_stdio_async` does over the SDK's own stdio streams."""
    lowlevel = server._lowlevel_server
    await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def wire_result(text: str, structured: dict[str, Any], is_error: bool) -> dict[str, Any]:
    """A tool result in its wire form, for :meth:`MCPServer.call_tool` to return.

    The SDK's request runner sends a mapping it is given as it is (a shallow
    copy), where a ``CallToolResult`` is first dumped field by field. The keys
    are the protocol's; ``resultType`` is required from protocol 2026-07-28 on,
    and the SDK drops it for older sessions. The SDK still checks the result
    against the schema of the session's protocol version before sending it.
    """
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": is_error,
        "resultType": "complete",
    }


# --- client side (benchmarks and tests) ---


def http_timeouts() -> httpx2.Timeout:
    """The timeouts the SDK's HTTP transports use (``MCP_DEFAULT_TIMEOUT`` for connect,
    write and pool, ``MCP_DEFAULT_SSE_READ_TIMEOUT`` for reads, from the private
    ``mcp.shared._httpx_utils``), for a client that must build its own ``AsyncClient``
    (one that shares a TLS context, which ``create_mcp_http_client`` cannot take) and
    still behave as the SDK's own."""
    return httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)


def http_client(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The SDK transports' own HTTP client (``create_mcp_http_client`` of the private
    ``mcp.shared._httpx_utils``) with ``headers`` on every request: a benchmark's or a
    test's session is then configured exactly as a default streamable-HTTP client's."""
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
