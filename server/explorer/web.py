"""The explorer's routes: pages, vendored assets and the ``/api/``, behind one guard.

Every explorer response goes through :func:`_guarded`: the MCP endpoint's own
Host/Origin (DNS-rebinding) check, with the very settings ``/mcp`` is served with
(:func:`transport_security`); a same-origin check of any ``Origin`` header; and the
security headers (:data:`HEADERS`: a Content-Security-Policy that allows scripts
and styles from this server only, no inline code, no framing). Pages and assets
are files read once at start-up from this package's ``static/`` folder and served
from memory: a request names one of them, never a path on disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response

from server.explorer.api import Api, Frame
from server.explorer.sessions import Sessions

#: The addresses local-only mode may be bound to, and that get the Host/Origin check.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
#: The pages: path -> file in static/.
PAGES = {
    "/": "index.html",
    "/vendor": "vendor.html",
    "/lifecycle": "lifecycle.html",
    "/search": "search.html",
    "/note": "note.html",
}
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
}
Endpoint = Callable[[Request], Awaitable[Response]]
#: A route: its path, methods and endpoint.
ExplorerRoute = tuple[str, list[str], Endpoint]


@dataclass(frozen=True)
class ExplorerConfig:
    """How the explorer is served: the address the server is bound to, the
    Host/Origin settings ``/mcp`` uses, and the key local-only mode answers
    keyless requests with (None: every request needs a key)."""

    host: str = "127.0.0.1"
    local_key: str | None = None

    @property
    def security(self) -> TransportSecuritySettings | None:
        return transport_security(self.host)


def transport_security(host: str) -> TransportSecuritySettings | None:
    """The Host/Origin protection of a server bound to ``host``: the MCP SDK's own
    default (only loopback names and origins, when bound to a loopback address;
    none otherwise), made here once so that ``/mcp`` and the explorer share it."""
    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


@dataclass(frozen=True)
class Asset:
    body: bytes
    media_type: str
    etag: str


def load_assets() -> dict[str, Asset]:
    """Every file under ``static/`` by its path there (``js/common.js``)."""
    root = resources.files("server.explorer") / "static"
    found: dict[str, Asset] = {}
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        for item in folder.iterdir():
            name = prefix + item.name
            if item.is_dir():
                pending.append((item, name + "/"))
                continue
            suffix = "." + item.name.rsplit(".", 1)[-1] if "." in item.name else ""
            if suffix not in _TYPES and item.name != "LICENSES":
                continue
            body = item.read_bytes()
            found[name] = Asset(
                body,
                _TYPES.get(suffix, "text/plain; charset=utf-8"),
                '"' + hashlib.sha256(body).hexdigest()[:20] + '"',
            )
    return found


def _same_origin(request: Request) -> bool:
    """Whether the request's ``Origin`` (when it sends one) is this server's own."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    parts = urlsplit(origin)
    return origin != "null" and parts.netloc == host and parts.scheme in ("http", "https")


def _guarded(endpoint: Endpoint, checker: TransportSecurityMiddleware) -> Endpoint:
    async def guarded(request: Request) -> Response:
        refused = await checker.validate_request(request, is_post=request.method == "POST")
        if refused is None and not _same_origin(request):
            refused = Response("Cross-origin request refused", status_code=403)
        response = refused if refused is not None else await endpoint(request)
        response.headers.update(HEADERS)
        return response

    guarded.__name__ = endpoint.__name__
    return guarded


def explorer_routes(
    frame: Frame, config: ExplorerConfig, *, max_body_bytes: int, compact: bool = True
) -> list[ExplorerRoute]:
    """The explorer's routes over ``frame``: its pages, ``/static/``, and ``/api/``
    (path, methods, endpoint), for ``MCPServer.custom_route``."""
    assets = load_assets()
    api = Api(
        frame,
        Sessions(),
        local_key=config.local_key,
        max_body_bytes=max_body_bytes,
        compact=compact,
    )
    checker = TransportSecurityMiddleware(config.security)

    def serve(name: str) -> Endpoint:
        async def asset(request: Request) -> Response:
            found = assets.get(name or request.path_params.get("path", ""))
            if found is None:
                return Response("Not found", status_code=404, media_type="text/plain")
            headers = {"ETag": found.etag, "Cache-Control": "no-cache"}
            if request.headers.get("if-none-match") == found.etag:
                return Response(status_code=304, headers=headers)
            return Response(found.body, media_type=found.media_type, headers=headers)

        return asset

    routes: list[ExplorerRoute] = [(path, ["GET"], serve(file)) for path, file in PAGES.items()]
    routes += [
        ("/static/{path:path}", ["GET"], serve("")),
        ("/api/session", ["GET", "POST", "DELETE"], api.session),
        ("/api/tools", ["GET"], api.tools),
        ("/api/tools/{name}", ["GET", "POST"], api.call),
        ("/api/explorer/{name}", ["GET", "POST"], api.call),
    ]
    return [(path, methods, _guarded(endpoint, checker)) for path, methods, endpoint in routes]
