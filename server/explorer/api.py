"""The explorer's read-only JSON API, made from the tool declarations.

Every MCP tool is ``/api/tools/<name>`` and every explorer view
``/api/explorer/<name>`` (:mod:`server.tools.views`), so a tool declared later is
served without a change here. ``POST`` takes the arguments as a JSON object,
checked by :func:`server.registry.checked_arguments` exactly as an MCP call's;
``GET`` takes them as query parameters, each converted to the type its field
declares (``depth=2`` is the integer 2, a repeated ``relationship_types`` a list)
and then checked the same way. The answer is the call's envelope, produced by the
frame (:meth:`server.app.VendorKnowledgeServer.answer`: admission, rate limits,
caches, metrics), as JSON; its error code sets the HTTP status (:data:`STATUS`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from server.envelope import dumps, error_envelope, request_id
from server.errors import ErrorCode, ToolFailure
from server.explorer.sessions import COOKIE, Sessions
from server.registry import checked_arguments
from server.service import Outcome, Service
from server.tools import TOOLS, VIEWS, Tool
from server.tools.arguments import ToolArguments, accepted_names
from server.tools.views import NewestBuild

#: The HTTP status of each error code (success is 200).
STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.QUERY_TOO_LONG: 400,
    ErrorCode.AUTH_REQUIRED: 401,
    ErrorCode.AUTH_INVALID: 401,
    ErrorCode.VENDOR_NOT_FOUND: 404,
    ErrorCode.PRODUCT_NOT_FOUND: 404,
    ErrorCode.VENDOR_AMBIGUOUS: 409,
    ErrorCode.PRODUCT_AMBIGUOUS: 409,
    ErrorCode.RATE_LIMIT: 429,
    ErrorCode.SEARCH_FAILED: 500,
    ErrorCode.DB_CONNECTION: 503,
}
_AUTH = {ErrorCode.AUTH_REQUIRED.value, ErrorCode.AUTH_INVALID.value}


class Frame(Protocol):
    """What the API needs of the server: its service and the call path MCP calls take."""

    @property
    def service(self) -> Service | None: ...

    def answer(self, name: str, key: str | None, checked: ToolArguments) -> Awaitable[Outcome]: ...


@dataclass(frozen=True)
class Caller:
    """Whose key a request is answered for, and where it came from: a header
    (``Authorization: Bearer`` or ``X-API-Key``), the session cookie, the
    local-only key (``--local-explorer``), or none."""

    key: str | None
    source: str  # header | session | local | none
    token: str | None = None  # the session's, when source is session


def http_status(env: Mapping[str, Any]) -> int:
    """The HTTP status of an envelope: 200, or its error code's.

    >>> http_status({"results": []}), http_status({"error": {"code": "RATE_LIMIT"}})
    (200, 429)
    """
    error = env.get("error")
    if not error:
        return 200
    try:
        return STATUS[ErrorCode(error.get("code"))]
    except ValueError:
        return 500


def _kinds(annotation: Any) -> set[type]:
    """The plain types a field's annotation accepts (through Optional, unions,
    Annotated and Literal).

    >>> sorted(k.__name__ for k in _kinds(int | None))
    ['NoneType', 'int']
    >>> sorted(k.__name__ for k in _kinds(list[str] | None))
    ['NoneType', 'list']
    """
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in typing.get_args(annotation)))
    if origin is typing.Literal:
        return {type(a) for a in typing.get_args(annotation)}
    if origin is not None:
        return {origin}
    return {annotation} if isinstance(annotation, type) else {object}


def _converted(text: str, kinds: set[type]) -> Any:
    """A query parameter's text as the type its field takes; left as text when it
    is not one (the strict check then says what is wrong)."""
    if str in kinds:
        return text
    if bool in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if int in kinds:
        stripped = text.strip()
        if stripped.lstrip("-").isdecimal() and stripped.isascii():
            return int(stripped)
    if float in kinds:
        try:
            return float(text)
        except ValueError:
            return text
    return text


def query_arguments(model: type[ToolArguments], query: QueryParams) -> dict[str, Any]:
    """A GET request's query parameters as a call's arguments, by the types the
    tool declares: a list field takes every value given, another the value (a
    parameter given twice stays a list, which the check refuses); unknown names
    pass through unchanged for the check to refuse.

    >>> from server.tools.graph import GetEntityNeighbors
    >>> query_arguments(GetEntityNeighbors.Arguments, QueryParams(
    ...     "vendor=Acme&entity=42&depth=2&relationship_types=ACQUIRED&relationship_types=OWNS"))
    {'vendor': 'Acme', 'entity': '42', 'depth': 2, 'relationship_types': ['ACQUIRED', 'OWNS']}
    """
    names = accepted_names(model)
    out: dict[str, Any] = {}
    for given in dict.fromkeys(query.keys()):
        values = query.getlist(given)
        field = model.model_fields.get(names.get(given, ""))
        if field is None:
            out[given] = values[0] if len(values) == 1 else values
            continue
        kinds = _kinds(field.annotation)
        if list in kinds:
            out[given] = values
        elif len(values) == 1:
            out[given] = _converted(values[0], kinds)
        else:
            out[given] = [_converted(v, kinds) for v in values]
    return out


def declarations(kind: str) -> dict[str, type[Tool]]:
    """The tools (``tools``) or the explorer views (``explorer``) by name."""
    return {t.name: t for t in (TOOLS if kind == "tools" else VIEWS)}


def listing() -> dict[str, Any]:
    """Every route of the API with its parameters' JSON schema."""

    def entry(kind: str, t: type[Tool]) -> dict[str, Any]:
        return {
            "name": t.name,
            "description": t.description,
            "route": f"/api/{kind}/{t.name}",
            "parameters": t.Arguments.model_json_schema(),
        }

    return {
        "tools": [entry("tools", t) for t in TOOLS],
        "explorer": [entry("explorer", t) for t in VIEWS],
    }


class Api:
    """The ``/api/`` endpoints over ``frame``, with the explorer's sessions."""

    def __init__(
        self,
        frame: Frame,
        sessions: Sessions,
        *,
        local_key: str | None,
        max_body_bytes: int,
        compact: bool = True,
    ) -> None:
        self.frame = frame
        self.sessions = sessions
        self.local_key = local_key
        self.max_body_bytes = max_body_bytes
        self.compact = compact

    # -- who is calling ---------------------------------------------------------------

    def caller(self, request: Request) -> Caller:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return Caller(auth[7:].strip() or None, "header")
        header = request.headers.get("x-api-key")
        if header:
            return Caller(header, "header")
        token = request.cookies.get(COOKIE)
        key = self.sessions.key(token)
        if key is not None:
            return Caller(key, "session", token)
        if self.local_key is not None:
            return Caller(self.local_key, "local")
        return Caller(None, "none")

    # -- endpoints --------------------------------------------------------------------

    async def tools(self, request: Request) -> Response:
        """``GET /api/tools``: every tool and view, with its parameters."""
        return self._json(listing())

    async def call(self, request: Request) -> Response:
        """``GET|POST /api/{tools|explorer}/<name>``: one call through the frame."""
        kind, name = request.url.path.split("/")[2], request.path_params["name"]
        declared = declarations(kind).get(name)
        if declared is None:
            names = ", ".join(sorted(declarations(kind)))
            return self._refused(
                name,
                ToolFailure(
                    ErrorCode.INVALID_PARAMS, f"No {kind} route {name!r}; there are: {names}."
                ),
                status=404,
                record=False,
            )
        if request.method == "POST":
            body = await self._body(request)
            if isinstance(body, ToolFailure):
                return self._refused(name, body, status=413 if "too large" in body.message else 400)
            arguments = body
        else:
            arguments = query_arguments(declared.Arguments, request.query_params)
        checked = checked_arguments(declared.Arguments, arguments)
        if isinstance(checked, ToolFailure):
            return self._refused(name, checked)
        caller = self.caller(request)
        outcome = await self._answer(name, caller.key, checked)
        if outcome is None:
            return self._unavailable(name)
        return self._outcome(outcome, caller)

    async def session(self, request: Request) -> Response:
        """``GET``: whether this browser is signed in, and whether the server runs in
        local-only mode; ``POST {"api_key": ...}``: sign in (the key is admitted by
        the frame first); ``DELETE``: sign out."""
        token = request.cookies.get(COOKIE)
        if request.method == "GET":
            return self._json(
                {
                    "local_only": self.local_key is not None,
                    "signed_in": self.sessions.key(token) is not None,
                }
            )
        if request.method == "DELETE":
            self.sessions.close(token)
            response = self._json({"signed_in": False})
            response.delete_cookie(COOKIE, path="/")
            return response
        body = await self._body(request)
        if isinstance(body, ToolFailure):
            return self._refused("session", body, record=False)
        key = body.get("api_key")
        if not isinstance(key, str) or not key.strip() or set(body) != {"api_key"}:
            failure = ToolFailure(
                ErrorCode.INVALID_PARAMS,
                'Send {"api_key": "kb_..."}: the key `python -m server keys create NAME` printed.',
            )
            return self._refused("session", failure, record=False)
        key = key.strip()
        outcome = await self._answer(NewestBuild.name, key, NewestBuild.Arguments())
        if outcome is None:
            return self._unavailable(NewestBuild.name)
        env, is_error = outcome
        if is_error:
            return self._json(env, http_status(env))
        self.sessions.close(token)  # a new sign-in replaces the old session
        response = self._json(
            {"signed_in": True, "graph_build_id": env["results"]["graph_build_id"]}
        )
        response.set_cookie(
            COOKIE,
            self.sessions.open(key),
            max_age=int(self.sessions.idle_s),
            path="/",
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )
        return response

    # -- plumbing ---------------------------------------------------------------------

    async def _answer(self, name: str, key: str | None, checked: ToolArguments) -> Outcome | None:
        if self.frame.service is None:
            return None
        return await self.frame.answer(name, key, checked)

    async def _body(self, request: Request) -> dict[str, Any] | ToolFailure:
        """The request's JSON object, read up to the size limit."""
        size = request.headers.get("content-length", "")
        if size.isdecimal() and int(size) > self.max_body_bytes:
            return ToolFailure(ErrorCode.INVALID_PARAMS, self._too_large())
        data = bytearray()
        async for part in request.stream():
            data += part
            if len(data) > self.max_body_bytes:
                return ToolFailure(ErrorCode.INVALID_PARAMS, self._too_large())
        try:
            body = orjson.loads(bytes(data) or b"{}")
        except orjson.JSONDecodeError:
            return ToolFailure(
                ErrorCode.INVALID_PARAMS,
                "The body is not JSON: send the tool's parameters as one JSON object.",
            )
        if not isinstance(body, dict):
            return ToolFailure(
                ErrorCode.INVALID_PARAMS,
                f"The body is a JSON {type(body).__name__}: send the parameters as one object.",
            )
        return body

    def _too_large(self) -> str:
        return f"The body is too large: at most {self.max_body_bytes} bytes are accepted."

    def _outcome(self, outcome: Outcome, caller: Caller) -> Response:
        env, _ = outcome
        response = self._json(env, http_status(env))
        code = (env.get("error") or {}).get("code")
        if code == ErrorCode.RATE_LIMIT.value:
            wait = (env["error"].get("details") or {}).get("reset_in_seconds", 1)
            response.headers["Retry-After"] = str(max(1, int(wait)))
        elif code in _AUTH:
            response.headers["WWW-Authenticate"] = 'Bearer realm="vendor-knowledge"'
            if caller.source == "session":  # its key was revoked: the session ends here
                self.sessions.close(caller.token)
                response.delete_cookie(COOKIE, path="/")
        return response

    def _refused(
        self, name: str, failure: ToolFailure, *, status: int | None = None, record: bool = True
    ) -> Response:
        """An error answer before the call runs; counted in the metrics for a known
        tool (``record``), never for a name the caller made up."""
        service = self.frame.service
        if record and service is not None:
            env, _ = service.refuse(name, failure)
        else:
            env = error_envelope(name, request_id(), failure, elapsed_ms=0.0)
        return self._json(env, status or STATUS[failure.code])

    def _unavailable(self, name: str) -> Response:
        failure = ToolFailure(ErrorCode.DB_CONNECTION, "The server is starting or stopping.")
        env = error_envelope(name, request_id(), failure, elapsed_ms=0.0)
        response = self._json(env, 503)
        response.headers["Retry-After"] = "1"
        return response

    def _json(self, data: Any, status: int = 200) -> Response:
        return Response(
            dumps(data, compact=self.compact),
            status_code=status,
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )


def routes_of(kind: str) -> Sequence[str]:
    """The names ``/api/<kind>/`` answers (for docs and tests)."""
    return list(declarations(kind))
