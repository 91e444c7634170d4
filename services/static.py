"""The browser table's static assets (docs/WEB.md), served from the package's data.

``GET /`` is ``services/web/index.html``; ``GET /static/NAME`` any other file of
``services/web`` (plain ES modules and CSS: no build step).  Every asset is read once,
at start-up, with its content type and a strong ETag (of its content); ``If-None-Match``
is answered 304.  The page and every module and style are revalidated on every load
(``no-cache``): their URLs carry no version, so a cache that kept a module for a while
could mix an old module with a new page right after a deploy (an import of a module the
old tree lacks: a 404).  A revalidation costs a 304 without a body.  Every answer
carries a Content-Security-Policy that allows only the page's own origin (no inline
script or style, no other host), so no request can leave it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from aiohttp import web

#: what the page may load and reach: its own origin only
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
CACHE = "no-cache"


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def load_assets(folder: Traversable | None = None) -> dict[str, Asset]:
    """Every served file of ``folder`` (``services/web``) by name (none starts with ``_``
    or ``.``)."""
    assets: dict[str, Asset] = {}
    for item in (folder or resources.files("services.web")).iterdir():
        name = item.name
        suffix = name[name.rfind(".") :] if "." in name else ""
        if name.startswith(("_", ".")) or suffix not in _TYPES or not item.is_file():
            continue
        body = item.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        assets[name] = Asset(body, _TYPES[suffix], etag)
    return assets


def _answer(request: web.Request, asset: Asset) -> web.Response:
    headers = {
        "Content-Security-Policy": CSP,
        "Cache-Control": CACHE,
        "ETag": asset.etag,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    headers["Content-Type"] = asset.content_type
    return web.Response(body=asset.body, headers=headers)


def add_routes(app: web.Application, folder: Traversable | None = None) -> None:
    """``GET /`` (the page) and ``GET /static/{name}`` (its modules and styles)."""
    assets = load_assets(folder)

    async def page(request: web.Request) -> web.Response:
        return _answer(request, assets["index.html"])

    async def static(request: web.Request) -> web.Response:
        asset = assets.get(request.match_info["name"])
        if asset is None:
            raise web.HTTPNotFound()
        return _answer(request, asset)

    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
