"""The tools: each one declared once (name, description, ``Arguments`` model,
envelope) with its own logic and result shaping, in one class.

The web explorer's views (:mod:`server.tools.views`, :data:`VIEWS`) are declared
the same way and answered by the same frame, but not published over MCP.

The frame every call goes through (admission, read snapshot, caches, metrics,
the error envelope) is :mod:`server.service`; :mod:`server.registry` publishes
each tool from its declaration, and :mod:`server.reference` writes the tool
reference (``docs/tools.md``) from it.

May import ``server``'s lower modules, ``kg`` and ``search``; only the frame
(:mod:`server.service`), the registry and the reference import this package.
"""

from server.tools.base import Tool
from server.tools.components import CheckComponents
from server.tools.graph import FindEntityPath, GetEntityNeighbors
from server.tools.lifecycle import GetLifecycle
from server.tools.metrics import GetServerMetrics
from server.tools.search import GetChunk, SemanticSearch
from server.tools.vendors import FindVendorInfo, ListVendors
from server.tools.views import VIEWS

#: every tool the server answers
TOOLS: tuple[type[Tool], ...] = (
    SemanticSearch,
    FindVendorInfo,
    GetChunk,
    ListVendors,
    FindEntityPath,
    GetEntityNeighbors,
    GetLifecycle,
    CheckComponents,
    GetServerMetrics,
)

__all__ = ["TOOLS", "VIEWS", "Tool", "tool_list"]


def tool_list() -> str:
    """Every tool, a line each: its name and the first clause of what it does
    (``python -m server --help``)."""
    width = max(len(t.name) for t in TOOLS)
    lines = []
    for t in TOOLS:
        first = t.description.split(". ")[0].split(": ")[0].rstrip(".")
        lines.append(f"  {t.name:<{width}}  {first}")
    return "\n".join(lines)
