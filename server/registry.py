"""Each tool published from its one declaration (:mod:`server.tools`): its MCP
signature, the strict check of a call's arguments, and its line in ``--help``.

The SDK derives a tool's input schema from a function's signature; the function
:func:`sdk_function` makes for a tool has the signature its ``Arguments`` model
says (each parameter's type, bounds, default and description), so the published
schema and :func:`checked_arguments` read the same declaration. A parameter's
alias (``vendor`` for ``vendor_name``) is accepted by the check and not
published: the schema names each concept once.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field, ValidationError
from pydantic_core import PydanticUndefined

from server.errors import ErrorCode, ToolFailure
from server.tools import TOOLS
from server.tools.arguments import MAX_QUERY_CHARS, ToolArguments, accepted_names
from server.tools.base import Tool

_SURROGATE = re.compile("[\ud800-\udfff]")
#: What a registered tool function hands a call to: (context, tool name, arguments).
Handler = Callable[[Context[Any, Any], str, dict[str, Any]], Awaitable[Any]]


def tool_class(name: str) -> type[Tool] | None:
    """The tool published as ``name``."""
    return next((t for t in TOOLS if t.name == name), None)


def checked_arguments(
    model: type[ToolArguments], arguments: dict[str, Any]
) -> ToolArguments | ToolFailure:
    """The call's arguments validated strictly (JSON types, no coercion), or what
    is wrong with them: an unknown parameter, one given under two of its names, a
    lone surrogate, a value out of bounds (INVALID_PARAMS naming what to change), a
    query over 500 characters (QUERY_TOO_LONG).

    >>> from server.tools.lifecycle import GetLifecycle
    >>> checked_arguments(GetLifecycle.Arguments, {"vendor": "Acme"}).vendor_name
    'Acme'
    >>> checked_arguments(GetLifecycle.Arguments, {"vendors": "Acme"}).message[:47]
    "Unknown parameter(s) 'vendors'; this tool takes"
    """
    names = accepted_names(model)
    unknown = sorted(set(arguments) - set(names))
    if unknown:
        takes = ", ".join(sorted(model.model_fields)) or "no parameters"
        return ToolFailure(
            ErrorCode.INVALID_PARAMS,
            f"Unknown parameter(s) {', '.join(map(repr, unknown))}; this tool takes {takes}.",
        )
    canonical: dict[str, Any] = {}
    for given, value in arguments.items():
        name = names[given]
        if name in canonical:
            return ToolFailure(
                ErrorCode.INVALID_PARAMS,
                f"{name} is given twice (as {name} and as an alias): give it once.",
            )
        # JSON can escape a lone UTF-16 surrogate ("\ud800"); such text cannot be
        # encoded again, so no answer quoting it could be sent
        if _has_surrogate(value):
            return ToolFailure(
                ErrorCode.INVALID_PARAMS,
                f"{given}: contains a lone UTF-16 surrogate (invalid Unicode): send plain text.",
            )
        canonical[name] = value
    try:
        return model.model_validate(canonical, strict=True)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            if where == "query" and err["type"] == "string_too_long":
                return ToolFailure(
                    ErrorCode.QUERY_TOO_LONG,
                    f"The query is {len(canonical.get('query', ''))} characters long; at most "
                    f"{MAX_QUERY_CHARS} are accepted.",
                )
            problems.append(f"{where}: {err['msg']}")
        return ToolFailure(
            ErrorCode.INVALID_PARAMS, "Invalid parameters: " + "; ".join(problems) + "."
        )


def given(arguments: ToolArguments) -> dict[str, Any]:
    """The parameters a checked call gave, under their published names."""
    return arguments.model_dump(exclude_unset=True)


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


def sdk_function(tool: type[Tool], handler: Handler) -> Callable[..., Awaitable[Any]]:
    """The function the SDK publishes ``tool`` as: its parameters are the
    ``Arguments`` model's (type, bounds, default, description), plus the request's
    context; a call goes to ``handler``."""

    async def call(ctx: Context[Any, Any], **arguments: Any) -> Any:
        return await handler(ctx, tool.name, arguments)

    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context[Any, Any])
    ]
    annotations: dict[str, Any] = {"ctx": Context[Any, Any]}
    for name, field in tool.Arguments.model_fields.items():
        annotation = _annotated(
            field.annotation, *field.metadata, Field(description=field.description)
        )
        default = inspect.Parameter.empty if field.default is PydanticUndefined else field.default
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
        annotations[name] = annotation
    returns = Annotated[CallToolResult, tool.Envelope]
    call.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    call.__annotations__ = {**annotations, "return": returns}
    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = tool.description
    return call


def _annotated(*parts: Any) -> Any:
    """``Annotated[type, *metadata]`` made at run time."""
    return Annotated[parts]
