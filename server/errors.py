"""The contract's error codes, and the one place library errors become them."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from kg.errors import (
    EntityAmbiguous,
    EntityNotFound,
    GraphError,
    GraphFailed,
    IdentifiersMissing,
    InvalidGraphRequest,
    ProductAmbiguous,
    ProductNotFound,
    VendorAmbiguous,
    VendorNotFound,
    VersionNotFound,
)
from search.errors import (
    InvalidSearch,
    QueryTooLong,
    SearchError,
    SearchFailed,
    SearchUnavailable,
)
from sql.errors import DatabaseError


class ErrorCode(StrEnum):
    AUTH_REQUIRED = "AUTH_REQUIRED"
    AUTH_INVALID = "AUTH_INVALID"
    RATE_LIMIT = "RATE_LIMIT"
    VENDOR_NOT_FOUND = "VENDOR_NOT_FOUND"
    VENDOR_AMBIGUOUS = "VENDOR_AMBIGUOUS"
    QUERY_TOO_LONG = "QUERY_TOO_LONG"
    INVALID_PARAMS = "INVALID_PARAMS"
    DB_CONNECTION = "DB_CONNECTION"
    SEARCH_FAILED = "SEARCH_FAILED"
    PRODUCT_NOT_FOUND = "PRODUCT_NOT_FOUND"
    PRODUCT_AMBIGUOUS = "PRODUCT_AMBIGUOUS"
    NOT_BUILT = "NOT_BUILT"


RECOVERY = {
    ErrorCode.AUTH_REQUIRED: "Set the BMCIS_API_KEY environment variable (or send "
    "'Authorization: Bearer <key>' / 'X-API-Key' over HTTP).",
    ErrorCode.AUTH_INVALID: "Verify the API key with your administrator.",
    ErrorCode.RATE_LIMIT: "Wait for the reset time given in details.reset_in_seconds.",
    ErrorCode.VENDOR_NOT_FOUND: "Use semantic_search or list_vendors to find the vendor name.",
    ErrorCode.VENDOR_AMBIGUOUS: "Use one of the full vendor names in details.suggestions.",
    ErrorCode.QUERY_TOO_LONG: "Shorten the query to its essential terms (500 characters at most).",
    ErrorCode.INVALID_PARAMS: "Check the parameter names, types and ranges in the tool's schema.",
    ErrorCode.DB_CONNECTION: "Retry with exponential backoff; the server reconnects by itself.",
    ErrorCode.SEARCH_FAILED: "Retry; if it persists, check the server log.",
    ErrorCode.PRODUCT_NOT_FOUND: "Use a name from details.suggestions, or get_lifecycle with "
    "only the vendor to list its products.",
    ErrorCode.PRODUCT_AMBIGUOUS: "Use one of the full product names in details.suggestions.",
    ErrorCode.NOT_BUILT: "The knowledge base lacks what the answer needs: rebuild it with "
    "`python -m extraction rebuild-graph` (the message says what is missing).",
}


class ToolFailure(Exception):
    """An expected failure of a tool call, answered as an MCP tool error."""

    def __init__(
        self, code: ErrorCode, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def action(self) -> str:
        return RECOVERY[self.code]


def failure_from(exc: BaseException) -> ToolFailure | None:
    """The contract error for a library exception; None for a bug."""
    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, VendorAmbiguous):
        names = [name for name, _ in exc.candidates]
        return ToolFailure(
            ErrorCode.VENDOR_AMBIGUOUS,
            str(exc),
            {
                "suggestions": names,
                "candidates": [{"name": n, "score": s} for n, s in exc.candidates],
            },
        )
    if isinstance(exc, VendorNotFound):
        message = str(exc)
        if not exc.suggestions:
            message += f" Try semantic_search('{exc.query} vendors') to find vendor names."
        return ToolFailure(
            ErrorCode.VENDOR_NOT_FOUND, message, {"suggestions": list(exc.suggestions)}
        )
    if isinstance(exc, ProductNotFound):
        return ToolFailure(
            ErrorCode.PRODUCT_NOT_FOUND, str(exc), {"suggestions": list(exc.suggestions)}
        )
    if isinstance(exc, ProductAmbiguous):
        return ToolFailure(
            ErrorCode.PRODUCT_AMBIGUOUS, str(exc), {"suggestions": list(exc.candidates)}
        )
    if isinstance(exc, VersionNotFound):
        return ToolFailure(ErrorCode.INVALID_PARAMS, str(exc), {"cycles": list(exc.cycles)})
    if isinstance(exc, EntityNotFound):
        return ToolFailure(
            ErrorCode.INVALID_PARAMS, str(exc), {"suggestions": list(exc.suggestions)}
        )
    if isinstance(exc, EntityAmbiguous):
        return ToolFailure(
            ErrorCode.INVALID_PARAMS, str(exc), {"suggestions": list(exc.candidates)}
        )
    if isinstance(exc, QueryTooLong):
        return ToolFailure(ErrorCode.QUERY_TOO_LONG, str(exc))
    if isinstance(exc, InvalidSearch | InvalidGraphRequest):
        return ToolFailure(ErrorCode.INVALID_PARAMS, str(exc))
    if isinstance(exc, IdentifiersMissing):
        return ToolFailure(ErrorCode.NOT_BUILT, str(exc))
    if isinstance(exc, GraphFailed | DatabaseError):
        return ToolFailure(ErrorCode.DB_CONNECTION, f"The database is unavailable: {exc}")
    if isinstance(exc, SearchUnavailable):
        return ToolFailure(ErrorCode.DB_CONNECTION, f"Search failed: {exc}")
    if isinstance(exc, SearchFailed):
        return ToolFailure(ErrorCode.SEARCH_FAILED, f"Search failed: {exc}")
    if isinstance(exc, SearchError | GraphError):
        return ToolFailure(ErrorCode.SEARCH_FAILED, str(exc))
    return None
