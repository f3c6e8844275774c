"""A real MCP client session (the SDK's in-process transport) on a real knowledge base."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from server.app import create_server
from server.auth import KeyStore
from server.service import Service
from server.settings import ServerSettings
from sql.database import Database


class Harness:
    """A server over ``db`` with one API key; ``run`` drives a client session."""

    def __init__(self, db: Database, embedder: Any, tmp_path: Path, **settings: Any) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.keys = KeyStore.load(tmp_path / "keys.json")
        self.key = self.keys.create("tests")
        self.settings = ServerSettings(
            api_key=self.key, keys_file=tmp_path / "keys.json", **settings
        )
        self.db = db
        self.embedder = embedder
        self.service: Service | None = None

    def make_service(self) -> Service:
        self.service = Service(self.settings, self.db, embedder=self.embedder, keys=self.keys)
        return self.service

    def run(self, scenario: Callable[[Client], Awaitable[Any]]) -> Any:
        server = create_server(self.settings, self.make_service)

        async def main() -> Any:
            async with Client(server) as client:
                return await scenario(client)

        return anyio.run(main)

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """One call in a fresh session; the envelope (error envelopes included)."""

        async def scenario(client: Client) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert result.structured_content is not None
            return dict(result.structured_content) | {"_is_error": result.is_error}

        return self.run(scenario)  # type: ignore[no-any-return]


def error_code(envelope: dict[str, Any]) -> str | None:
    return (envelope.get("error") or {}).get("code")
