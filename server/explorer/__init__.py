"""The web explorer: pages at ``/`` and a read-only JSON API at ``/api/``, served by
the streamable-HTTP server beside ``/mcp`` and answered through the same frame as
the MCP tools (:mod:`server.service`).

- :mod:`server.explorer.api`: ``/api/tools/<name>`` for every MCP tool and
  ``/api/explorer/<name>`` for every explorer view, made from their declarations;
  the envelope as JSON, its error code as the HTTP status.
- :mod:`server.explorer.sessions`: a key entered once becomes an HttpOnly,
  SameSite=Strict session cookie holding an opaque token.
- :mod:`server.explorer.web`: the pages and their vendored assets, the security
  headers (a Content-Security-Policy without inline scripts) and the Host/Origin
  check every explorer route goes through.

May import ``server``'s lower modules and :mod:`server.tools`; nothing but
:mod:`server.app` imports it.
"""

from server.explorer.web import ExplorerConfig, explorer_routes, transport_security

__all__ = ["ExplorerConfig", "explorer_routes", "transport_security"]
