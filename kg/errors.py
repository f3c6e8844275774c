"""Graph errors. Each class's docstring is its default message.

The server maps them once, at its boundary, to the contract's error codes:
``VendorNotFound`` to VENDOR_NOT_FOUND, ``VendorAmbiguous`` to
VENDOR_AMBIGUOUS, the other ``InvalidGraphRequest`` errors to INVALID_PARAMS
and ``GraphFailed`` to DB_CONNECTION.
"""

from __future__ import annotations

from collections.abc import Sequence


class GraphError(Exception):
    """The vendor graph request could not be answered."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())


class InvalidGraphRequest(GraphError, ValueError):
    """The request is invalid."""


class InvalidName(InvalidGraphRequest):
    """The name is not usable: give 1 to 200 characters with at least one letter or digit."""


class VendorNotFound(GraphError):
    """No vendor matches the name."""

    def __init__(self, query: str, suggestions: Sequence[str] = (), *, empty: bool = False):
        self.query = query
        self.suggestions = tuple(suggestions)
        if empty:
            message = (
                "The knowledge base has no vendors yet: build it with "
                "`python -m extraction rebuild-graph`."
            )
        elif self.suggestions:
            listed = ", ".join(repr(s) for s in self.suggestions)
            message = f"Vendor {query!r} not found. Did you mean: {listed}?"
        else:
            message = f"Vendor {query!r} not found, and no vendor name is close to it."
        super().__init__(message)


class VendorAmbiguous(GraphError):
    """Several vendors match the name."""

    def __init__(self, query: str, candidates: Sequence[tuple[str, float]]):
        self.query = query
        self.candidates = tuple(candidates)
        listed = ", ".join(repr(name) for name, _ in self.candidates)
        super().__init__(
            f"Ambiguous vendor name {query!r}. Multiple matches found: [{listed}]. "
            "Use the full vendor name from this list."
        )


class EntityNotFound(GraphError):
    """No entity of the vendor matches the name."""

    def __init__(self, query: str, vendor: str, suggestions: Sequence[str] = ()):
        self.query = query
        self.vendor = vendor
        self.suggestions = tuple(suggestions)
        hint = f" Did you mean: {', '.join(map(repr, self.suggestions))}?" if suggestions else ""
        super().__init__(f"No entity {query!r} in the graph of {vendor!r}.{hint}")


class EntityAmbiguous(GraphError):
    """Several entities of the vendor match the name."""

    def __init__(self, query: str, vendor: str, candidates: Sequence[str]):
        self.query = query
        self.vendor = vendor
        self.candidates = tuple(candidates)
        super().__init__(
            f"Entity name {query!r} matches several entities of {vendor!r}: "
            f"{', '.join(map(repr, self.candidates))}. Use one of these (with its type) or its id."
        )


class ProductNotFound(GraphError):
    """No product with release cycles matches the name."""

    def __init__(self, query: str, vendor: str | None, suggestions: Sequence[str] = ()) -> None:
        self.query = query
        self.vendor = vendor
        self.suggestions = tuple(suggestions)
        where = f" of {vendor!r}" if vendor else ""
        hint = f" Did you mean: {', '.join(map(repr, self.suggestions))}?" if suggestions else ""
        super().__init__(f"No product {query!r} with release cycles{where}.{hint}")


class ProductAmbiguous(GraphError):
    """Several products match the name."""

    def __init__(self, query: str, vendor: str | None, candidates: Sequence[str]) -> None:
        self.query = query
        self.vendor = vendor
        self.candidates = tuple(candidates)
        super().__init__(
            f"Product name {query!r} matches several products: "
            f"{', '.join(map(repr, self.candidates))}. Use one of these names."
        )


class VersionNotFound(GraphError):
    """The version belongs to no release cycle of the product."""

    def __init__(self, version: str, product: str, cycles: Sequence[str]) -> None:
        self.version = version
        self.product = product
        self.cycles = tuple(cycles)
        listed = ", ".join(map(repr, self.cycles[:12])) + (", ..." if len(cycles) > 12 else "")
        super().__init__(
            f"Version {version!r} belongs to no release cycle of {product!r}; "
            f"its cycles are {listed}."
        )


class GraphFailed(GraphError):
    """The graph could not be read from the database."""


class InvalidBill(InvalidGraphRequest):
    """The bill of materials cannot be read: give CycloneDX JSON (1.2 to 1.6) or SPDX 2.3 JSON."""


class IdentifiersMissing(GraphFailed):
    """The knowledge base holds no product identifiers: run `python -m extraction rebuild-graph`."""
