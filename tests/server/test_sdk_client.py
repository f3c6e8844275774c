"""The client side of ``server/sdk.py``: the SDK's HTTP timeouts as its transports use
them, and the shared output-schema validators, applied while open and restored after."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession

from server.sdk import http_client, http_timeouts, share_output_schema_validator


def _schema() -> dict[str, Any]:
    """An output schema no other test compiled (the shared validators live per process)."""
    return {
        "title": f"answer {uuid.uuid4().hex}",
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
    }


def _session() -> Any:
    """What the SDK's validator method reads of a session."""
    return SimpleNamespace(_tool_output_validators={})


def _validator(session: Any, schema: dict[str, Any]) -> Any:
    return ClientSession._output_schema_validator(session, "tool", schema)


def test_http_timeouts_are_the_sdk_transports_own() -> None:
    timeouts = http_timeouts()
    assert isinstance(timeouts.connect, float) and isinstance(timeouts.read, float)
    assert 0 < timeouts.connect < timeouts.read  # reads wait on long-lived SSE streams
    assert timeouts.write == timeouts.pool == timeouts.connect

    async def client_timeouts() -> Any:
        async with http_client({"X-API-Key": "k"}) as http:
            assert http.headers["x-api-key"] == "k"
            return http.timeout

    assert anyio.run(client_timeouts) == timeouts


def test_sessions_share_compiled_validators_only_inside_the_block() -> None:
    schema = _schema()
    first, second = _session(), _session()
    with share_output_schema_validator():
        shared = _validator(first, schema)
        assert _validator(second, schema) is shared
        assert second._tool_output_validators["tool"] is shared
    assert list(shared.iter_errors({"x": 1})) == []
    assert list(shared.iter_errors({"x": "one"}))  # answers are still validated
    # the SDK's own method: one compiled validator per session
    assert _validator(_session(), schema) is not _validator(_session(), schema)


def test_the_sdk_method_is_restored_when_the_last_block_closes() -> None:
    original = ClientSession.__dict__["_output_schema_validator"]
    with share_output_schema_validator():
        patched = ClientSession.__dict__["_output_schema_validator"]
        assert patched is not original
        with share_output_schema_validator():  # nested or overlapping: one patch
            assert ClientSession.__dict__["_output_schema_validator"] is patched
        assert ClientSession.__dict__["_output_schema_validator"] is patched
    assert ClientSession.__dict__["_output_schema_validator"] is original

    with pytest.raises(RuntimeError), share_output_schema_validator():
        raise RuntimeError("a session failed")
    assert ClientSession.__dict__["_output_schema_validator"] is original
