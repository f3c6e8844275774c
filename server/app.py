"""The MCP server: tools and resources over :class:`~server.service.Service`.

Built by :func:`create_server` from settings; the service (pool, models,
caches) lives for the server's lifespan. Tool inputs are validated strictly
before anything runs: wrong types, unknown or missing parameters, text that
is not valid Unicode (lone surrogates) and out-of-range values get
INVALID_PARAMS naming what to change (a query over 500 characters gets
QUERY_TOO_LONG). Every answer is the envelope, as structured content
(matching the published output schema) and as JSON text.

The module is long (about 530 lines) because it holds every tool's published
signature, with each parameter's bounds and description, in one place; each tool's
logic is its class in :mod:`server.tools`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from server import sdk
from server.envelope import dumps
from server.errors import ErrorCode, ToolFailure
from server.models import AnyEnvelope, SearchEnvelope, VendorEnvelope, lean_schema
from server.service import Outcome, Service
from server.settings import ServerSettings
from server.stdio import event_loop_stdio

log = logging.getLogger("server")

Mode = Literal["ids_only", "metadata", "preview", "full"]
# a field name or relationship type: short, and echoed in errors, so bounded
Word = Annotated[str, Field(max_length=100)]
_SURROGATE = re.compile("[\ud800-\udfff]")
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = """\
Vendor knowledge: hybrid search over a business's vendor notes and a per-vendor knowledge graph.
Start light and fetch more only for what matters: semantic_search in ids_only or metadata mode,
then get_chunk for the best few in full; find_vendor_info in metadata mode, then preview or full.
Support questions (is a version still supported, what reaches end of life when): get_lifecycle.
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
        checked = _checked_arguments(sdk.argument_model(tool), arguments)
        if isinstance(checked, ToolFailure):
            return self._tool_result(service.refuse(name, checked), service)
        if context is None or not sdk.answerable_directly(tool):
            return await super().call_tool(name, arguments, context)
        key = _api_key(context, service)
        looked = self._running == 0 and self._settings.fast("cache-on-loop")
        if looked:
            cached = service.cached(name, key, checked)
            if cached is not None:
                return self._tool_result(cached, service)
        self._running += 1
        try:
            if not self._settings.fast("skip-sdk-checks"):
                return await super().call_tool(name, arguments, context)
            outcome = await anyio.to_thread.run_sync(
                lambda: service.call(name, key, checked, cache_first=not looked)
            )
            return self._tool_result(outcome, service)
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


def _checked_arguments(
    model: type[BaseModel], arguments: dict[str, Any]
) -> dict[str, Any] | ToolFailure:
    """The tool's keyword arguments, validated strictly, or what is wrong with them."""
    known = {f.alias or n for n, f in model.model_fields.items()}
    unknown = sorted(set(arguments) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "no parameters"
        return ToolFailure(
            ErrorCode.INVALID_PARAMS,
            f"Unknown parameter(s) {', '.join(map(repr, unknown))}; this tool takes {takes}.",
        )
    for name, value in arguments.items():
        # JSON can escape a lone UTF-16 surrogate ("\ud800"); such text cannot be
        # encoded again, so no answer quoting it could be sent
        if _has_surrogate(value):
            return ToolFailure(
                ErrorCode.INVALID_PARAMS,
                f"{name}: contains a lone UTF-16 surrogate (invalid Unicode): send plain text.",
            )
    try:
        validated = model.model_validate(arguments, strict=True)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            if where == "query" and err["type"] == "string_too_long":
                return ToolFailure(
                    ErrorCode.QUERY_TOO_LONG,
                    f"The query is {len(arguments.get('query', ''))} characters long; at most "
                    "500 are accepted.",
                )
            problems.append(f"{where}: {err['msg']}")
        return ToolFailure(
            ErrorCode.INVALID_PARAMS, "Invalid parameters: " + "; ".join(problems) + "."
        )
    return sdk.keyword_arguments(validated)


def _has_surrogate(value: object) -> bool:
    """Whether a string anywhere in ``value`` (nested lists and objects included)
    holds a lone surrogate, U+D800-U+DFFF."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
    return False


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
    settings: ServerSettings, make_service: Callable[[], Service]
) -> VendorKnowledgeServer:
    """The MCP server; ``make_service`` runs once, when the server starts."""
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

    @mcp.tool(
        annotations=READ_ONLY,
        description="Hybrid search (vector + full text, Reciprocal Rank Fusion) over the vendor "
        "notes. Returns ranked chunks with scores, source file and category and chunk position; "
        "more per result in heavier modes. Paginate with page_size and cursor.",
    )
    async def semantic_search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=500,
                description="What to look for: natural language or keywords (1-500 characters); "
                '"quoted phrases" and -word narrow the keyword side.',
            ),
        ],
        ctx: Context[Any, Any],
        top_k: Annotated[
            int | None,
            Field(ge=1, le=50, description="results per response (1-50, default 10)"),
        ] = None,
        response_mode: Annotated[
            Mode | None,
            Field(
                description="ids_only (~10 tokens/result), metadata (default), preview (adds a "
                "200-character snippet and the section header) or full (adds the text and both "
                "arm scores)"
            ),
        ] = None,
        fields: Annotated[
            list[Word] | None,
            Field(
                max_length=20,
                description="only these result fields (must exist in the chosen mode)",
            ),
        ] = None,
        page_size: Annotated[
            int | None, Field(ge=1, le=50, description="results per page; replaces top_k")
        ] = None,
        cursor: Annotated[
            str | None,
            Field(max_length=1000, description="pagination.cursor of the previous page"),
        ] = None,
    ) -> Annotated[CallToolResult, SearchEnvelope]:
        return await call(  # type: ignore[no-any-return]
            ctx,
            "semantic_search",
            {
                "query": query,
                "top_k": top_k,
                "response_mode": response_mode,
                "fields": fields,
                "page_size": page_size,
                "cursor": cursor,
            },
        )

    @mcp.tool(annotations=READ_ONLY)
    async def find_vendor_info(
        vendor_name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="vendor name as a person would type it (case, legal suffixes and "
                "small typos do not matter)",
            ),
        ],
        ctx: Context[Any, Any],
        response_mode: Annotated[
            Mode | None,
            Field(
                description="ids_only (entity and relationship ids), metadata (default: "
                "statistics), preview (top 5 entities and relationships) or full (capped graph: "
                "at most 100 entities and 500 relationships)"
            ),
        ] = None,
        include_relationships: Annotated[
            bool, Field(description="include relationships (default true)")
        ] = True,
    ) -> Annotated[CallToolResult, VendorEnvelope]:
        """A vendor's knowledge graph: statistics, most important entities and relationships."""
        return await call(  # type: ignore[no-any-return]
            ctx,
            "find_vendor_info",
            {
                "vendor_name": vendor_name,
                "response_mode": response_mode,
                "include_relationships": include_relationships,
            },
        )

    @mcp.tool(annotations=READ_ONLY)
    async def get_lifecycle(
        ctx: Context[Any, Any],
        vendor: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description="vendor name as a person would type it; alone: every product of "
                "the vendor",
            ),
        ] = None,
        product: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description="product name (case, the vendor's name before it and slugs do not "
                "matter; 'Windows Server 2016' is the product and its version); without a "
                "vendor, any vendor's product",
            ),
        ] = None,
        version: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=100,
                description="a version to resolve to its release cycle ('17.0.2' -> '17')",
            ),
        ] = None,
        as_of: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=40,
                description="the date the support status is for, YYYY-MM-DD (default today)",
            ),
        ] = None,
        within_days: Annotated[
            int | None,
            Field(
                ge=1,
                le=10_000,
                description="instead: every end of support across vendors (or of vendor) from "
                "as_of to this many days later, soonest first",
            ),
        ] = None,
        response_mode: Annotated[
            Mode | None,
            Field(
                description="ids_only (cycle names), metadata (default: status and dates), "
                "preview (what ends next, latest release) or full (everything the note says)"
            ),
        ] = None,
        page_size: Annotated[int, Field(ge=1, le=500, description="cycles per page")] = 50,
        cursor: Annotated[
            str | None, Field(max_length=1000, description="pagination.cursor of the last page")
        ] = None,
    ) -> Annotated[CallToolResult, AnyEnvelope]:
        """Which products and versions are supported, and until when: release cycles with
        their support status as of a date, or the ends of support coming up across vendors."""
        return await call(  # type: ignore[no-any-return]
            ctx,
            "get_lifecycle",
            {
                "vendor": vendor,
                "product": product,
                "version": version,
                "as_of": as_of,
                "within_days": within_days,
                "response_mode": response_mode,
                "page_size": page_size,
                "cursor": cursor,
            },
        )

    @mcp.tool(annotations=READ_ONLY)
    async def get_chunk(
        chunk_id: Annotated[int, Field(ge=1, description="chunk_id from semantic_search")],
        ctx: Context[Any, Any],
        response_mode: Annotated[Mode, Field(description="default full")] = "full",
    ) -> Annotated[CallToolResult, AnyEnvelope]:
        """One chunk by id, by default in full: the step after a light search."""
        return await call(  # type: ignore[no-any-return]
            ctx, "get_chunk", {"chunk_id": chunk_id, "response_mode": response_mode}
        )

    @mcp.tool(annotations=READ_ONLY)
    async def list_vendors(
        ctx: Context[Any, Any],
        page_size: Annotated[int, Field(ge=1, le=100, description="vendors per page")] = 20,
        cursor: Annotated[
            str | None, Field(max_length=1000, description="pagination.cursor of the last page")
        ] = None,
    ) -> Annotated[CallToolResult, AnyEnvelope]:
        """Vendors in the knowledge base with their aliases and counts, by name."""
        return await call(  # type: ignore[no-any-return]
            ctx, "list_vendors", {"page_size": page_size, "cursor": cursor}
        )

    @mcp.tool(annotations=READ_ONLY)
    async def find_entity_path(
        vendor_name: Annotated[str, Field(min_length=1, max_length=200)],
        from_entity: Annotated[
            str, Field(min_length=1, max_length=200, description="entity name or id")
        ],
        to_entity: Annotated[
            str, Field(min_length=1, max_length=200, description="entity name or id")
        ],
        ctx: Context[Any, Any],
        max_hops: Annotated[int, Field(ge=1, le=20, description="longest path (1-20)")] = 6,
        relationship_types: Annotated[
            list[Word] | None, Field(max_length=20, description="only these relationship types")
        ] = None,
    ) -> Annotated[CallToolResult, AnyEnvelope]:
        """The shortest chain of relationships linking two entities of a vendor's graph."""
        return await call(  # type: ignore[no-any-return]
            ctx,
            "find_entity_path",
            {
                "vendor_name": vendor_name,
                "from_entity": from_entity,
                "to_entity": to_entity,
                "max_hops": max_hops,
                "relationship_types": relationship_types,
            },
        )

    @mcp.tool(annotations=READ_ONLY)
    async def get_entity_neighbors(
        vendor_name: Annotated[str, Field(min_length=1, max_length=200)],
        entity: Annotated[str, Field(min_length=1, max_length=200, description="name or id")],
        ctx: Context[Any, Any],
        depth: Annotated[int, Field(ge=1, le=5, description="hops (1-5)")] = 1,
        relationship_types: Annotated[
            list[Word] | None, Field(max_length=20, description="only these relationship types")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="most neighbours")] = 50,
    ) -> Annotated[CallToolResult, AnyEnvelope]:
        """Entities within depth relationships of an entity, closest first."""
        return await call(  # type: ignore[no-any-return]
            ctx,
            "get_entity_neighbors",
            {
                "vendor_name": vendor_name,
                "entity": entity,
                "depth": depth,
                "relationship_types": relationship_types,
                "limit": limit,
            },
        )

    @mcp.tool(annotations=READ_ONLY)
    async def get_server_metrics(ctx: Context[Any, Any]) -> Annotated[CallToolResult, AnyEnvelope]:
        """Per-tool call counts, latency percentiles, cache hit rates and errors."""
        return await call(ctx, "get_server_metrics", {})  # type: ignore[no-any-return]

    @mcp.resource("vendor://{name}", mime_type="application/json")
    async def vendor_resource(name: str) -> str:
        """A vendor's statistics (find_vendor_info in metadata mode)."""
        service = holder.service
        assert service is not None
        key = service.settings.api_key.get_secret_value() if service.settings.api_key else None
        env, _ = await anyio.to_thread.run_sync(
            lambda: service.call(
                "find_vendor_info", key, {"vendor_name": name, "response_mode": "metadata"}
            )
        )
        return dumps(env)

    @mcp.resource("chunk://{chunk_id}", mime_type="application/json")
    async def chunk_resource(chunk_id: str) -> str:
        """One chunk in full (get_chunk)."""
        service = holder.service
        assert service is not None
        key = service.settings.api_key.get_secret_value() if service.settings.api_key else None
        if not chunk_id.isdigit():
            raise ValueError(f"chunk ids are positive integers, not {chunk_id!r}")
        env, _ = await anyio.to_thread.run_sync(
            lambda: service.call("get_chunk", key, {"chunk_id": int(chunk_id)})
        )
        return dumps(env)

    for tool in sdk.registered_tools(mcp):
        # Speed layer lean-schema: published in the form clients validate faster,
        # same meaning (server.models.lean_schema)
        schema = sdk.output_schema(tool)
        if schema is not None and settings.fast("lean-schema"):
            sdk.publish_output_schema(tool, lean_schema(schema))
    return mcp
