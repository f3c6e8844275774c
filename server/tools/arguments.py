"""What a tool's arguments are made of: one typed model per tool, and the pieces
the tools share, each declared once.

A tool's ``Arguments`` (a :class:`ToolArguments`) is the single declaration of its
parameters: their types, bounds, defaults, descriptions and the other names they
are accepted under. The MCP input schema (:mod:`server.registry`), the strict
argument check, ``python -m server --help`` and the generated tool reference
(``docs/tools.md``, :mod:`server.reference`) are all made from it.

One concept, one name across tools: a vendor is ``vendor_name`` everywhere, and
``vendor`` is accepted for it (an alias, see :func:`accepted_names`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from server.settings import ResponseMode

#: A field name or a relationship type: short, and echoed in errors, so bounded.
Word = Annotated[str, Field(max_length=100)]
#: The longest query ``semantic_search`` takes (QUERY_TOO_LONG beyond it).
MAX_QUERY_CHARS = 500
#: The longest vendor, product or entity name.
MAX_NAME_CHARS = 200


class ToolArguments(BaseModel):
    """The base of every tool's arguments: unknown parameters are refused, and a
    checked call's arguments do not change."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def accepted_names(model: type[BaseModel]) -> dict[str, str]:
    """Every name a parameter of ``model`` is accepted under -> the parameter.

    >>> class A(ToolArguments):
    ...     vendor_name: str = vendor_name_field()
    >>> accepted_names(A)
    {'vendor_name': 'vendor_name', 'vendor': 'vendor_name'}
    """
    names: dict[str, str] = {}
    for name, field in model.model_fields.items():
        names[name] = name
        if isinstance(field.validation_alias, AliasChoices):
            for choice in field.validation_alias.choices:
                if isinstance(choice, str):
                    names.setdefault(choice, name)
    return names


def aliases(model: type[BaseModel], name: str) -> list[str]:
    """The other names parameter ``name`` of ``model`` is accepted under."""
    return [a for a, n in accepted_names(model).items() if n == name and a != name]


# -- the shared parameters -------------------------------------------------------------


def vendor_name_field(description: str | None = None, *, required: bool = True) -> Any:
    """``vendor_name`` (also accepted as ``vendor``): a vendor as a person types it."""
    return Field(
        ... if required else None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        validation_alias=AliasChoices("vendor_name", "vendor"),
        description=description
        or "vendor name as a person would type it (case, legal suffixes and small typos do "
        "not matter)",
    )


def response_mode_field(description: str, default: ResponseMode | None = None) -> Any:
    """``response_mode``: how much of each result an answer carries."""
    return Field(default, description=description)


def cursor_field() -> Any:
    """``cursor``: where the next page starts, as the previous page gave it."""
    return Field(None, max_length=1000, description="pagination.cursor of the previous page")


def relationship_types_field() -> Any:
    """``relationship_types``: only these relationship types."""
    return Field(None, max_length=20, description="only these relationship types")


def entity_field(description: str = "entity name or id") -> Any:
    """An entity of a vendor's graph, by name or id."""
    return Field(..., min_length=1, max_length=MAX_NAME_CHARS, description=description)
