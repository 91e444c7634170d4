"""The page's static files over plain HTTP (services/static.py, docs/WEB.md): every file
carries an ETag of its content and ``Cache-Control: no-cache`` (revalidated on each
load, so old and new modules never mix after a deploy); ``If-None-Match`` with the
current ETag answers 304, and changed content (a new deploy) gets a new ETag.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

from services.static import add_routes


async def fetch(tree: Path, name: str, etag: str = "") -> tuple[int, str, str, bytes]:
    """One GET of /static/NAME from a server of ``tree`` (started, as a deploy is)."""
    app = web.Application()
    add_routes(app, tree)
    async with TestServer(app) as server, ClientSession() as client:
        headers = {"If-None-Match": etag} if etag else {}
        async with client.get(server.make_url(f"/static/{name}"), headers=headers) as answer:
            return (
                answer.status,
                answer.headers.get("ETag", ""),
                answer.headers.get("Cache-Control", ""),
                await answer.read(),
            )


async def test_modules_are_revalidated_by_etag_and_a_change_gets_a_new_one(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><script type=module src=/static/app.js>")
    module = tmp_path / "app.js"
    module.write_text('import "./old.js";\n')
    status, etag, cache, body = await fetch(tmp_path, "app.js")
    assert (status, cache, body) == (200, "no-cache", b'import "./old.js";\n')
    assert etag.startswith('"') and len(etag) > 10, etag
    # unchanged: 304, no body, the same ETag
    status, again, cache, body = await fetch(tmp_path, "app.js", etag)
    assert (status, again, cache, body) == (304, etag, "no-cache", b"")
    # a deploy changes the module: a new ETag, and the old one no longer matches
    module.write_text('import "./new.js";\n')
    status, fresh, cache, body = await fetch(tmp_path, "app.js", etag)
    assert (status, cache, body) == (200, "no-cache", b'import "./new.js";\n')
    assert fresh and fresh != etag
    status, _, _, _ = await fetch(tmp_path, "app.js", fresh)
    assert status == 304
