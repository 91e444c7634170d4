"""The Makefile explains itself and keeps its quick target quick: ``make help`` lists every
target in one line (the first line of the ``## `` comment above it), and ``make unit``
runs no test that starts a redis-server, a Redis Cluster or a browser. Each check is
shown to fail on a planted case."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
MAKEFILE = ROOT / "Makefile"

#: the fixtures that start what ``make unit`` must not: a redis-server (tests/conftest.py,
#: tests/integration/conftest.py, tests/e2e/conftest.py), a Redis Cluster, and the browser
#: table's server and Chromium (tests/e2e/web/conftest.py); every other fixture that
#: starts one depends on one of these
SERVICE_FIXTURES = frozenset({"redis_url", "cluster", "base_url", "browser"})
#: what a test that starts one by itself calls
SERVICE_CALLS = re.compile(r"\b(redis_server|redis_cluster|RedisProcess|sync_playwright)\(")

#: lists each collected test's fixtures (the closure: the fixtures its fixtures use too)
FIXTURE_LISTER = """
import json, os

def pytest_collection_finish(session):
    found = {item.nodeid: sorted(item.fixturenames) for item in session.items}
    with open(os.environ["FIXTURES_OUT"], "w") as out:
        json.dump(found, out)
"""


def make(*args: str) -> subprocess.CompletedProcess[str]:
    # (not the make running this suite's flags: no jobserver, no -n from a parent)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(
        ["make", "--no-print-directory", "-s", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def targets(makefile: Path) -> set[str]:
    """The Makefile's public targets: those named .PHONY."""
    found: set[str] = set()
    for line in makefile.read_text().splitlines():
        if line.startswith(".PHONY:"):
            found.update(line.split(":", 1)[1].split())
    return found


def help_rows(makefile: Path) -> dict[str, str]:
    """What ``make help`` of ``makefile`` says of each target."""
    rows: dict[str, str] = {}
    for line in make("-f", str(makefile), "help").stdout.splitlines()[1:]:
        name, _, text = line.strip().partition(" ")
        rows[name] = text.strip()
    return rows


def unhelped(makefile: Path) -> set[str]:
    """The public targets ``make help`` does not list, each in one line, with a sentence."""
    rows = help_rows(makefile)
    return {t for t in targets(makefile) if not rows.get(t, "").endswith((".", ")"))}


def test_make_help_lists_every_target_in_one_line(tmp_path: Path) -> None:
    rows = help_rows(MAKEFILE)
    assert set(rows) == targets(MAKEFILE) and {"help", "unit", "test", "run"} <= set(rows)
    assert not unhelped(MAKEFILE)
    assert all(len(text) <= 100 for text in rows.values()), rows
    # planted: a target whose comment went away is missing from the list
    planted = tmp_path / "Makefile"
    text = MAKEFILE.read_text()
    comment = "## Solver queries as JSON lines on stdin, one JSON answer line each on stdout.\n"
    assert comment in text
    planted.write_text(text.replace(comment, ""))
    assert unhelped(planted) == {"solve"}


def unit_paths() -> list[str]:
    """The test paths ``make unit`` runs (read from its command line, not run)."""
    command = make("-n", "unit").stdout.splitlines()[-1]
    assert "pytest" in command, command
    return [word for word in command.split() if word.startswith("tests/")]


def starting_services(paths: list[str], tmp_path: Path) -> set[str]:
    """The tests of ``paths`` (slow tests aside) that start a redis-server, a Redis
    Cluster or a browser: through a fixture, or by calling a helper themselves (every
    test of such a file)."""
    (tmp_path / "fixture_lister.py").write_text(FIXTURE_LISTER)
    out = tmp_path / "fixtures.json"
    pythonpath = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    collect = ["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "fixture_lister"]
    subprocess.run(
        [sys.executable, "-m", "pytest", *collect, "-m", "not slow", *paths],
        cwd=ROOT,
        env=os.environ | {"FIXTURES_OUT": str(out), "PYTHONPATH": pythonpath},
        capture_output=True,
        timeout=300,
        check=True,
    )
    collected: dict[str, list[str]] = json.loads(out.read_text())
    assert len(collected) > 100, "the collection was not read"
    found: set[str] = set()
    for nodeid, fixtures in collected.items():
        source = (ROOT / nodeid.split("::")[0]).read_text()
        if SERVICE_FIXTURES & set(fixtures) or SERVICE_CALLS.search(source):
            found.add(nodeid)
    return found


def test_make_unit_starts_no_redis_and_no_browser(tmp_path: Path) -> None:
    paths = unit_paths()
    assert {"tests/unit", "tests/property"} <= set(paths), paths
    # planted: a file of the store's Redis tests among them is found out
    planted = "tests/integration/test_redis_store.py"
    found = starting_services([*paths, planted], tmp_path)
    assert found and {nodeid.split("::")[0] for nodeid in found} == {planted}, sorted(found)
