"""Fixtures of the browser table's tests: one ``glintwick serve --store memory`` (what
``make run`` runs) on free ports, with its in-process house-bot pool, and one headless
Chromium driven by Playwright, shared by the package's files (package scope: started
once in a test process for as many of them as run there in a row, which is what
``--dist loadfile`` hands a worker), and a fresh page (``tab``) for each test.

``GLINTWICK_WEB_TREE`` names another checkout (an older commit's worktree) whose
``glintwick serve``, and so whose page, the tests run against instead (run by this
Python, that tree first on its path, as ``GLINTWICK_OUTSIDER_TREE`` does for the API's
outsider tests): how a browser test shows it fails on an older page (docs/WEB.md,
"Each defect's test, on the old page").
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loadtests.processes.server import ServerProcess
from tests.e2e.web.support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    OPERATOR,
    ROOT,
    SHOTS,
    Tab,
    playwright_api,
)

if TYPE_CHECKING:  # (the support module skips the package when Playwright is missing)
    from playwright.sync_api import Browser

#: the checkout whose server and page the tests run against (this one by default)
TREE = Path(os.environ.get("GLINTWICK_WEB_TREE") or ROOT)


@pytest.fixture(scope="package")
def base_url() -> Iterator[str]:
    """``glintwick serve --store memory`` on free ports, house bots in process."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    # (one server per test process: under pytest-xdist each worker's has a log of its own)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = f"server-{worker}" if worker else "server"
    server = ServerProcess(SHOTS, "--operator-token", OPERATOR, name=name, http=True, root=TREE)
    with server:
        yield server.http_url


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def tab(browser: Browser, base_url: str, request: pytest.FixtureRequest) -> Iterator[Tab]:
    shots = SHOTS / request.node.name.replace("[", "-").replace("]", "")
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15000)
    page = context.new_page()
    opened = Tab(page, base_url, shots)
    yield opened
    offsite = [u for u in opened.requests if not u.startswith(base_url + "/")]
    context.close()
    assert not offsite, f"requests left the page's origin: {offsite[:5]}"
    assert not opened.errors, f"the page threw: {opened.errors[:3]}"
