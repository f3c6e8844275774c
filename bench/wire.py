"""Lean MCP clients for benchmarks: JSON-RPC written straight to the wire.

The SDK's ``Client`` validates every structured answer against the tool's output
schema with ``jsonschema`` and routes each message through several tasks: for a
large answer that is most of the time a call takes (15 ms of a 20 ms cached
``find_vendor_info full``). A benchmark of the *server* should not be charged for
it, so :mod:`bench.server` measures each call twice: through the SDK client, and
through these clients, which do what any client must (frame, send, read, parse the
JSON with orjson) and nothing else.

Both speak the protocol for real: ``initialize``, the ``initialized``
notification, then ``tools/call`` requests; answers are matched by id, and an
error answer raises :class:`WireError`.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

PROTOCOL_VERSION = "2025-06-18"
_INIT = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "bench-wire", "version": "1.0"},
}


class WireError(RuntimeError):
    """The server answered with a JSON-RPC error, or not at all."""


class WireClient(Protocol):
    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...


def _message(request_id: int | None, method: str, params: Mapping[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if request_id is not None:
        msg["id"] = request_id
    return orjson.dumps(msg)


def _result(answer: dict[str, Any]) -> dict[str, Any]:
    if "error" in answer:
        raise WireError(f"JSON-RPC error: {answer['error']}")
    result = answer["result"]
    assert isinstance(result, dict)
    return result


class StdioWire:
    """``python -m server`` as a subprocess; one JSON message per line each way."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
        )
        self._next_id = 0
        self._request("initialize", _INIT)
        self._send(None, "notifications/initialized", None)

    def _send(self, request_id: int | None, method: str, params: Mapping[str, Any] | None) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(_message(request_id, method, params) + b"\n")
        self._proc.stdin.flush()

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self._send(self._next_id, method, params)
        assert self._proc.stdout is not None
        while True:
            line = self._proc.stdout.readline()
            if not line:
                raise WireError(f"the server closed its output (exit {self._proc.poll()})")
            answer = orjson.loads(line)
            if answer.get("id") == self._next_id:  # skips notifications (logs, progress)
                return _result(answer)

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self._request("tools/call", {"name": name, "arguments": dict(arguments)})

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class HttpWire:
    """Streamable HTTP over one keep-alive connection (``http.client``).

    Requests accept JSON or an event stream, as the transport requires; an event
    stream answer is read to its end and its ``data:`` line with our id taken.
    """

    def __init__(self, host: str, port: int, path: str, api_key: str) -> None:
        self._conn = http.client.HTTPConnection(host, port, timeout=60)
        self._path = path
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "X-API-Key": api_key,
        }
        self._next_id = 0
        self._request("initialize", _INIT)
        self._headers["Mcp-Protocol-Version"] = PROTOCOL_VERSION
        self._post(_message(None, "notifications/initialized", None))

    def _post(self, body: bytes) -> tuple[str, bytes]:
        self._conn.request("POST", self._path, body, self._headers)
        response = self._conn.getresponse()
        data = response.read()
        if response.status >= 400:
            raise WireError(f"HTTP {response.status}: {data[:200]!r}")
        session = response.getheader("Mcp-Session-Id")
        if session:
            self._headers["Mcp-Session-Id"] = session
        return response.getheader("Content-Type") or "", data

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        kind, data = self._post(_message(self._next_id, method, params))
        if not kind.startswith("text/event-stream"):
            return _result(orjson.loads(data))
        for line in data.splitlines():
            if line.startswith(b"data:"):
                answer = orjson.loads(line[5:])
                if isinstance(answer, dict) and answer.get("id") == self._next_id:
                    return _result(answer)
        raise WireError(f"no answer to request {self._next_id} in the event stream")

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self._request("tools/call", {"name": name, "arguments": dict(arguments)})

    def close(self) -> None:
        self._conn.close()
