"""Fixtures of the browser table's tests: one ``glintwick serve --store memory`` (what
``make run`` runs) on free ports, with its in-process house-bot pool, and one headless
Chromium driven by Playwright, shared by the package's files (package scope: started
once in a test process for as many of them as run there in a row, which is what
``--dist loadfile`` hands a worker), and a fresh page (``tab``) for each test.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="package")
def base_url() -> Iterator[str]:
    """``glintwick serve --store memory`` on free ports, house bots in process."""
    http, grpc_port = free_port(), free_port()
    command = [
        sys.executable,
        "-c",
        "import glintwick_cli, sys; sys.exit(glintwick_cli.main())",
        "serve",
        "--store",
        "memory",
        "--http",
        f"127.0.0.1:{http}",
        "--grpc",
        f"127.0.0.1:{grpc_port}",
        "--operator-token",
        OPERATOR,
    ]
    SHOTS.mkdir(parents=True, exist_ok=True)
    # (one server per test process: under pytest-xdist each worker's has a log of its own)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    log_name = f"server-{worker}.log" if worker else "server.log"
    log = open(SHOTS / log_name, "w")  # noqa: SIM115 (closed after the server)
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(10)
        log.close()


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
