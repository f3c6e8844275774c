"""Checking what a caller asks for, before anything touches the database."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from search.errors import EmptyQuery, InvalidFilter, InvalidQueryText, InvalidTopK, QueryTooLong

MIN_TOP_K = 1
MAX_TOP_K = 50
MAX_QUERY_CHARS = 500

# Control characters other than ordinary whitespace mean binary data, not text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# websearch_to_tsquery syntax: a quoted phrase, a leading "-" (not) or the word OR
# in capitals, as search engines take it. A lower-case "or" is English ("regional
# or distant metastases"): read as an operator it made every other word required.
_WEBSEARCH = re.compile(r"\"|(?:^|\s)-\w|\sOR\s")


def validate_query(query: object, *, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query, stripped and NFC-normalised, or a clear error.

    Examples
    --------
    >>> validate_query("  Café  pricing ")
    'Café  pricing'
    >>> validate_query("   ")
    Traceback (most recent call last):
    ...
    search.errors.EmptyQuery: The query is empty: give some words to search for.
    """
    if isinstance(query, bytes | bytearray):
        raise InvalidQueryText("The query is bytes: send it as text.")
    if not isinstance(query, str):
        raise InvalidQueryText(f"The query must be a string, not {type(query).__name__}.")
    if "\x00" in query or _CONTROL.search(query):
        raise InvalidQueryText()
    text = unicodedata.normalize("NFC", query).strip()
    if not text:
        raise EmptyQuery()
    if len(text) > max_chars:
        raise QueryTooLong(
            f"The query is too long: {len(text)} characters, at most {max_chars} are accepted."
        )
    return text


def validate_top_k(top_k: object) -> int:
    """``top_k`` as an int in 1..50, or :class:`InvalidTopK`.

    >>> validate_top_k(10)
    10
    >>> validate_top_k(0)
    Traceback (most recent call last):
    ...
    search.errors.InvalidTopK: top_k must be an integer from 1 to 50, not 0.
    """
    # bool is an int subclass; True as a result count is a caller's bug
    if not isinstance(top_k, int) or isinstance(top_k, bool):
        raise InvalidTopK(f"top_k must be an integer from 1 to 50, not {top_k!r}.")
    if not MIN_TOP_K <= top_k <= MAX_TOP_K:
        raise InvalidTopK(f"top_k must be an integer from 1 to 50, not {top_k}.")
    return top_k


def uses_websearch_syntax(query: str) -> bool:
    """Whether the query asks for phrases, exclusions or alternatives.

    Such queries are matched strictly (``websearch_to_tsquery``); others match
    any of their words, since natural-language questions rarely have every word
    in one chunk.

    >>> uses_websearch_syntax('"rocket sled" pricing')
    True
    >>> uses_websearch_syntax("rocket -sled")
    True
    >>> uses_websearch_syntax("sleds OR rockets"), uses_websearch_syntax("sleds or rockets")
    (True, False)
    >>> uses_websearch_syntax("state-of-the-art rockets")
    False
    """
    return bool(_WEBSEARCH.search(query))


class SearchFilters(BaseModel):
    """Restrictions on which documents' chunks may be returned."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    vendor: str | None = None
    category: str | None = None
    source_prefix: str | None = None
    """Source path prefix, e.g. ``vendors/Acme/``."""
    date_from: date | None = None
    date_to: date | None = None

    @model_validator(mode="after")
    def _ordered_dates(self) -> SearchFilters:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self

    @property
    def active(self) -> bool:
        return any(v is not None for v in self.model_dump().values())


def parse_filters(filters: SearchFilters | Mapping[str, Any] | None) -> SearchFilters:
    """Filters from a model or a plain mapping; unknown keys and wrong types are errors.

    >>> parse_filters({"vendor": "Acme"}).vendor
    'Acme'
    >>> parse_filters({"colour": "red"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    search.errors.InvalidFilter: Invalid search filters: colour: unknown filter (allowed: ...).
    """
    if filters is None:
        return SearchFilters()
    if isinstance(filters, SearchFilters):
        return filters
    if not isinstance(filters, Mapping):
        raise InvalidFilter(f"Filters must be a mapping, not {type(filters).__name__}.")
    allowed = ", ".join(SearchFilters.model_fields)
    data = dict(filters)
    for key in ("date_from", "date_to"):
        # ISO strings are what JSON clients can send; strict mode alone refuses them
        if isinstance(data.get(key), str):
            try:
                data[key] = date.fromisoformat(data[key])
            except ValueError:
                raise InvalidFilter(
                    f"Invalid search filters: {key}: {data[key]!r} is not an ISO date."
                ) from None
    try:
        return SearchFilters.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "filters"
            if err["type"] == "extra_forbidden":
                problems.append(f"{where}: unknown filter (allowed: {allowed})")
            else:
                problems.append(f"{where}: {err['msg']}")
        raise InvalidFilter("Invalid search filters: " + "; ".join(problems) + ".") from None
