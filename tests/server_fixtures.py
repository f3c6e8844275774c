"""A real MCP client session (the SDK's in-process transport) on a real knowledge base."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
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
from tests.conftest import REPO


class Harness:
    """A server over ``db`` with one API key; ``run`` drives a client session."""

    def __init__(self, db: Database, embedder: Any, tmp_path: Path, **settings: Any) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.keys = KeyStore(db)
        # one key per harness: several harnesses may share a database
        self.key = self.keys.create(f"tests-{uuid.uuid4().hex[:12]}")
        self.keys.cursor_secret()  # what the first server on a database makes
        self.settings = ServerSettings(
            api_key=self.key, keys_file=tmp_path / "keys.json", **settings
        )
        self.db = db
        self.embedder = embedder
        self.service: Service | None = None

    def make_service(self) -> Service:
        self.service = Service(self.settings, self.db, embedder=self.embedder)
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http(
    env: dict[str, str], port: int | None = None, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m server`` over streamable HTTP in ``env``, once it accepts
    connections; the process and the MCP endpoint's URL."""
    port = port or free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            *extra,
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.3)
    return proc, f"http://127.0.0.1:{port}/mcp"


def stop(proc: subprocess.Popen[bytes]) -> str:
    """Terminate a server process; what it logged."""
    proc.terminate()
    proc.wait(timeout=30)
    log = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return log
