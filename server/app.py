"""The MCP server: tools and resources over :class:`~server.service.Service`.

Built by :func:`create_server` from settings; the service (pool, models, caches)
lives for the server's lifespan. Every tool is registered in one loop from its
declaration (:mod:`server.tools`, :mod:`server.registry`), which also checks a call's
arguments strictly before anything runs (INVALID_PARAMS naming what to change). Every
answer is the envelope, as structured content and as JSON text.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from server import sdk
from server.envelope import dumps
from server.errors import ToolFailure
from server.explorer import ExplorerConfig, explorer_routes
from server.models import lean_schema
from server.registry import checked_arguments, given, sdk_function, tool_class
from server.resources import register_resources
from server.service import Outcome, Service
from server.settings import ServerSettings
from server.stdio import event_loop_stdio
from server.tools import TOOLS
from server.tools.arguments import ToolArguments

log = logging.getLogger("server")

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = """\
Vendor knowledge: hybrid search over a business's vendor notes and a per-vendor knowledge graph.
Start light and fetch more only for what matters: semantic_search in ids_only or metadata mode,
then get_chunk for the best few in full; find_vendor_info in metadata mode, then preview or full.
Support questions (is a version still supported, what reaches end of life when): get_lifecycle;
for the software in use (components with package URLs or names, and versions): check_components.
Vendor names are resolved loosely (case, legal suffixes, typos); an ambiguous name returns the
candidates to choose from."""


class _Holder:
    service: Service | None = None


class VendorKnowledgeServer(MCPServer[Any]):
    """MCPServer with strict argument validation answered in the envelope, and the
    speed layers of the call path, each of which ``KB_PLAIN_PATHS`` switches back
    to the SDK's own path (docs/server.md, "Speed layers")."""

    def __init__(
        self, *args: Any, holder: _Holder, settings: ServerSettings, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._holder = holder
        self._settings = settings
        self._running = 0  # tool calls in worker threads (one event loop: no lock)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """A tool call; its arguments are checked strictly first (INVALID_PARAMS or
        QUERY_TOO_LONG in the envelope, never an SDK error). Speed layers:

        - ``cache-on-loop``: when no other call is running, a cached answer is
          served here, on the event loop, with no worker-thread hand-off and no
          database (:meth:`Service.cached`; no figure of its own was measured:
          it came with the build watcher that took the database out of cached
          calls). Under concurrency every call takes its turn through the
          worker threads: served first, cached answers had left the others
          queueing twice as long (50 clients: p99 1.7 s against 0.9 s).
        - ``skip-sdk-checks``: the server answers the call itself, so the SDK
          does not validate the checked arguments again nor check the answer
          against the output schema (the envelope is built to it, and the tests
          validate every answer they receive): a large answer took 0.2-0.5 ms to
          re-check. The plain path calls the tool through ``MCPServer.call_tool``.
        - ``wire-result``: see :func:`_result`.
        """
        tool = sdk.registered_tool(self, name)
        service = self._holder.service
        if tool is None or service is None:
            return await super().call_tool(name, arguments, context)
        declared = tool_class(name)
        if declared is None:
            return await super().call_tool(name, arguments, context)
        checked = checked_arguments(declared.Arguments, arguments)
        if isinstance(checked, ToolFailure):
            return self._tool_result(service.refuse(name, checked), service)
        if context is None or not sdk.answerable_directly(tool):
            return await super().call_tool(name, given(checked), context)
        key = _api_key(context, service)
        if self._settings.fast("skip-sdk-checks"):
            return self._tool_result(await self.answer(name, key, checked), service)
        if self._running == 0 and self._settings.fast("cache-on-loop"):
            cached = service.cached(name, key, checked)
            if cached is not None:
                return self._tool_result(cached, service)
        self._running += 1
        try:
            return await super().call_tool(name, given(checked), context)
        finally:
            self._running -= 1

    @property
    def service(self) -> Service | None:
        """The running service (None before the lifespan starts it and after)."""
        return self._holder.service

    async def answer(self, name: str, key: str | None, checked: ToolArguments) -> Outcome:
        """A call of tool (or explorer view) ``name`` with checked arguments, for
        ``key``, answered through the frame: what an MCP call and the explorer's
        ``/api/`` share. Speed layer ``cache-on-loop``: a cached answer is served
        here, on the event loop, when no other call is running."""
        service = self._holder.service
        assert service is not None, "the lifespan starts the service"
        looked = self._running == 0 and self._settings.fast("cache-on-loop")
        if looked:
            cached = service.cached(name, key, checked)
            if cached is not None:
                return cached
        self._running += 1
        try:
            return await anyio.to_thread.run_sync(
                lambda: service.call(name, key, checked, cache_first=not looked)
            )
        finally:
            self._running -= 1

    def _tool_result(self, outcome: Outcome, service: Service) -> dict[str, Any] | CallToolResult:
        return _result(outcome, service, wire=self._settings.fast("wire-result"))

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, over streams read and written on the event
        loop when stdin and stdout are pipes (:mod:`server.stdio`).

        Speed layer ``stdio``: three thread hand-offs a call fewer; the cached
        floor went from 2.02 to 1.43 ms. The plain path is the SDK's own
        ``MCPServer.run_stdio_async``.
        """
        if not self._settings.fast("stdio"):
            log.info("stdio: the SDK's streams (worker threads)")
            await super().run_stdio_async()
            return
        async with (
            event_loop_stdio() as (stdin, stdout),
            sdk.stdio_transport(stdin, stdout) as (read_stream, write_stream),
        ):
            where = "the event loop's pipes" if stdin is not None else "the SDK's worker threads"
            log.info("stdio: streams on %s", where)
            await sdk.serve(self, read_stream, write_stream)


def _result(outcome: Outcome, service: Service, *, wire: bool) -> dict[str, Any] | CallToolResult:
    """The tool result: the envelope as structured content and as JSON text.

    Speed layer ``wire-result`` (``wire``): in its wire form
    (:func:`server.sdk.wire_result`) rather than as a ``CallToolResult``, the
    plain path, which the SDK first dumps field by field: for a 60 KB answer
    that dump was a third of the SDK's time (2 ms of a cached call). A result
    the SDK checks against the output schema (the plain path of
    ``skip-sdk-checks``) must be a ``CallToolResult``.
    """
    env, is_error = outcome
    text = dumps(env, compact=service.settings.enable_response_compression)
    if wire:
        return sdk.wire_result(text, env, is_error)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=env, is_error=is_error
    )


def _api_key(ctx: Context[Any, Any], service: Service) -> str | None:
    headers = ctx.headers
    if headers is None:  # stdio: the key the client started the server with
        return service.settings.api_key.get_secret_value() if service.settings.api_key else None
    lowered = {k.lower(): v for k, v in headers.items()}
    auth = lowered.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return lowered.get("x-api-key") or None


def create_server(
    settings: ServerSettings,
    make_service: Callable[[], Service],
    explorer: ExplorerConfig | None = None,
) -> VendorKnowledgeServer:
    """The MCP server; ``make_service`` runs once, when the server starts. Over
    streamable HTTP it also serves the web explorer (:mod:`server.explorer`) as
    ``explorer`` says (default: bound to 127.0.0.1, every request needs a key)."""
    holder = _Holder()

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[Service]:
        service: Service = await anyio.to_thread.run_sync(make_service)
        holder.service = service
        try:
            yield service
        finally:
            service.close()
            holder.service = None

    mcp = VendorKnowledgeServer(
        "vendor-knowledge",
        instructions=INSTRUCTIONS,
        version="1.0.0",
        lifespan=lifespan,
        log_level=settings.log_level,
        holder=holder,
        settings=settings,
    )

    async def call(ctx: Context[Any, Any], name: str, arguments: dict[str, Any]) -> Any:
        service = holder.service
        assert service is not None, "the lifespan starts the service"
        key = _api_key(ctx, service)
        outcome = await anyio.to_thread.run_sync(lambda: service.call(name, key, arguments))
        return _result(outcome, service, wire=False)  # the SDK checks it: no wire form

    for tool in TOOLS:
        mcp.add_tool(
            sdk_function(tool, call),
            name=tool.name,
            description=tool.description,
            annotations=READ_ONLY,
            structured_output=True,
        )

    register_resources(mcp, lambda: holder.service)

    for path, methods, endpoint in explorer_routes(
        mcp,
        explorer or ExplorerConfig(),
        max_body_bytes=settings.http_max_body_bytes,
        compact=settings.enable_response_compression,
    ):
        mcp.custom_route(path, methods=methods)(endpoint)

    for published in sdk.registered_tools(mcp):
        # Speed layer lean-schema: published in the form clients validate faster,
        # same meaning (server.models.lean_schema)
        schema = sdk.output_schema(published)
        if schema is not None and settings.fast("lean-schema"):
            sdk.publish_output_schema(published, lean_schema(schema))
    return mcp
