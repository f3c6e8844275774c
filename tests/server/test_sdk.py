"""server.sdk against the installed MCP SDK: the version range the adapter was written
for, and every one of its functions, so that an SDK upgrade that moves an internal the
server relies on fails here, loudly, rather than in a client's session. Also the one
tokenizer internal (server.tokens.backend_count)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import bpe_openai
import orjson
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from pydantic import BaseModel, Field, ValidationError

from server import sdk
from server.tokens import ENCODING, backend_count


class Echoed(BaseModel):
    text: str
    times: int


def _server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("adapter-test")

    @server.tool()
    async def echo(
        text: Annotated[str, Field(max_length=5)],
        ctx: Context[Any, Any],
        times: int = 1,
        tags: list[str] | None = None,
    ) -> Annotated[CallToolResult, Echoed]:
        """Echo."""
        echoed = {"text": text * times, "times": times}
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=echoed
        )

    @server.tool()
    def count(n: int) -> int:
        """No Context."""
        return n

    return server


def test_the_installed_sdk_is_in_the_range_the_adapter_was_written_for() -> None:
    installed = Version(importlib.metadata.version("mcp"))
    assert installed in SpecifierSet(sdk.SUPPORTED_MCP), (
        f"mcp {installed} is outside {sdk.SUPPORTED_MCP}, the range server/sdk.py was "
        "written for: check each of its functions against this SDK (this test module "
        "exercises them), then widen SUPPORTED_MCP"
    )


def test_registered_tools_their_arguments_and_whether_they_take_a_context() -> None:
    server = _server()
    echo, count = sdk.registered_tool(server, "echo"), sdk.registered_tool(server, "count")
    assert echo is not None and count is not None
    assert sdk.registered_tool(server, "missing") is None
    assert [t.name for t in sdk.registered_tools(server)] == ["echo", "count"]
    model = sdk.argument_model(echo)
    assert set(model.model_fields) == {"text", "times", "tags"}  # the Context is none
    model.model_validate({"text": "hi", "times": 2, "tags": ["a"]}, strict=True)
    for wrong in ({"text": "too long"}, {"text": "hi", "times": "2"}, {}):
        with pytest.raises(ValidationError):
            model.model_validate(wrong, strict=True)
    assert sdk.answerable_directly(echo) and not sdk.answerable_directly(count)


def test_a_published_output_schema_is_what_clients_list_even_after_a_listing() -> None:
    server = _server()
    echo = sdk.registered_tool(server, "echo")
    assert echo is not None
    schema = sdk.output_schema(echo)
    assert schema is not None and set(schema["properties"]) == {"text", "times"}
    assert sdk.output_schema(sdk.registered_tools(server)[1]) is not None  # int: wrapped

    async def listed() -> dict[str, Any]:
        tools = {t.name: t for t in await server.list_tools()}
        assert tools["echo"].output_schema is not None
        return tools["echo"].output_schema

    assert anyio.run(listed) == schema
    lean = {"type": "object", "properties": {"text": {"type": "string"}}}
    sdk.publish_output_schema(echo, lean)
    assert sdk.output_schema(echo) == lean and anyio.run(listed) == lean

    async def call() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("echo", {"text": "ab", "times": 2})

    # the SDK still checks answers against the model, and the client against the schema
    result = anyio.run(call)
    assert not result.is_error and result.structured_content == {"text": "abab", "times": 2}


class _Wired(MCPServer[Any]):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        text = orjson.dumps(arguments).decode()
        return sdk.wire_result(text, {"echo": arguments}, bool(arguments.get("fail")))


@pytest.mark.parametrize("fail", [False, True])
def test_a_result_in_wire_form_reaches_the_client_whole(fail: bool) -> None:
    server = _Wired("wired")

    @server.tool()
    def anything(fail: bool = False) -> dict[str, Any]:
        """Never called: call_tool answers."""
        raise AssertionError

    async def call() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("anything", {"fail": fail})

    result = anyio.run(call)
    assert result.is_error is fail
    assert result.structured_content == {"echo": {"fail": fail}}
    assert [(c.type, getattr(c, "text", None)) for c in result.content] == [
        ("text", orjson.dumps({"fail": fail}).decode())
    ]


class _Written:
    """What the SDK's stdio transport writes and flushes to its stdout."""

    def __init__(self, answers: int) -> None:
        self.text = ""
        self.flushes = 0
        self._answers = answers
        self.all_written = anyio.Event()

    async def write(self, text: str) -> None:
        self.text += text
        if self.text.count("\n") >= self._answers:
            self.all_written.set()

    async def flush(self) -> None:
        self.flushes += 1


class _Lines:
    """Request lines, as the SDK's stdio transport iterates its stdin; the input
    ends once every answer is written (its end closes the session)."""

    def __init__(self, messages: list[dict[str, Any]], out: _Written) -> None:
        self._lines = [orjson.dumps(m).decode() + "\n" for m in messages]
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    async def _read(self) -> AsyncIterator[str]:
        for line in self._lines:
            yield line
        with anyio.fail_after(30):
            await self._out.all_written.wait()


def test_a_session_served_over_the_stdio_transport_with_given_streams() -> None:
    server = _server()
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi", "times": 3}},
        },
    ]
    out = _Written(answers=2)

    async def main() -> None:
        async with sdk.stdio_transport(_Lines(requests, out), out) as (read_stream, write_stream):
            await sdk.serve(server, read_stream, write_stream)

    anyio.run(main)
    answers = {m["id"]: m for m in map(orjson.loads, out.text.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "adapter-test"
    assert answers[2]["result"]["structuredContent"] == {"text": "hihihi", "times": 3}
    assert out.flushes >= 2  # every answer is flushed


def test_the_tokenizer_counts_without_building_token_ids() -> None:
    """The fast path of server.tokens: a bpe_openai without its private count would
    silently fall back to the slower public encoder."""
    encoding = bpe_openai.get_encoding(ENCODING)
    count = backend_count(encoding)
    assert count is not None, f"bpe_openai {importlib.metadata.version('bpe-openai')}"
    text = '{"results":[{"chunk_id":1,"text":"End of support for iOS 17, ²①"}]}'
    assert count(text) == len(encoding.encode_ordinary(text))
    assert backend_count(object()) is None
