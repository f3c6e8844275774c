"""The tools: each one's own logic and result shaping, in one class.

The frame every call goes through (admission, read snapshot, caches, metrics,
the error envelope) is :mod:`server.service`; the MCP signatures the tools are
published with are :mod:`server.app`.
"""

from server.tools.base import Tool
from server.tools.graph import FindEntityPath, GetEntityNeighbors
from server.tools.lifecycle import GetLifecycle
from server.tools.metrics import GetServerMetrics
from server.tools.search import GetChunk, SemanticSearch
from server.tools.vendors import FindVendorInfo, ListVendors

#: every tool the server answers
TOOLS: tuple[type[Tool], ...] = (
    SemanticSearch,
    FindVendorInfo,
    GetChunk,
    ListVendors,
    FindEntityPath,
    GetEntityNeighbors,
    GetLifecycle,
    GetServerMetrics,
)
