"""The MCP resources: ``vendor://{name}`` (a vendor's statistics, find_vendor_info in
metadata mode) and ``chunk://{chunk_id}`` (one chunk in full, get_chunk), answered by
the tools through the same frame, with the key the server was started with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from server.envelope import dumps
from server.service import Service


def register_resources(mcp: MCPServer[Any], running: Callable[[], Service | None]) -> None:
    """Add the resources to ``mcp``; ``running()`` is the service of the lifespan."""

    async def answer(tool: str, arguments: dict[str, Any]) -> str:
        service = running()
        assert service is not None, "the lifespan starts the service"
        key = service.settings.api_key.get_secret_value() if service.settings.api_key else None
        env, _ = await anyio.to_thread.run_sync(lambda: service.call(tool, key, arguments))
        return dumps(env)

    @mcp.resource("vendor://{name}", mime_type="application/json")
    async def vendor_resource(name: str) -> str:
        """A vendor's statistics (find_vendor_info in metadata mode)."""
        return await answer("find_vendor_info", {"vendor_name": name, "response_mode": "metadata"})

    @mcp.resource("chunk://{chunk_id}", mime_type="application/json")
    async def chunk_resource(chunk_id: str) -> str:
        """One chunk in full (get_chunk)."""
        if not chunk_id.isdigit():
            raise ValueError(f"chunk ids are positive integers, not {chunk_id!r}")
        return await answer("get_chunk", {"chunk_id": int(chunk_id)})
