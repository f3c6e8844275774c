"""Search errors. Each class's docstring is its default message.

The server maps them once, at its boundary, to the contract's error codes:
``QueryTooLong`` to QUERY_TOO_LONG, the other ``InvalidSearch`` errors to
INVALID_PARAMS, ``SearchUnavailable`` to DB_CONNECTION and ``SearchFailed`` to
SEARCH_FAILED.
"""

from __future__ import annotations


class SearchError(Exception):
    """The search could not be run."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())


class InvalidSearch(SearchError, ValueError):
    """The search request is invalid."""


class EmptyQuery(InvalidSearch):
    """The query is empty: give some words to search for."""


class QueryTooLong(InvalidSearch):
    """The query is too long: at most 500 characters are accepted."""


class InvalidQueryText(InvalidSearch):
    """The query contains binary data or NUL characters: send plain text."""


class InvalidTopK(InvalidSearch):
    """top_k must be an integer from 1 to 50."""


class InvalidFilter(InvalidSearch):
    """The search filters are invalid."""


class SearchFailed(SearchError):
    """The search failed in the database."""


class SearchUnavailable(SearchFailed):
    """The database could not be reached: retry with exponential backoff."""


class EmbeddingConfigError(ValueError):
    """The configured embedding model or engine cannot be used."""
