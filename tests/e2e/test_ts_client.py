"""A TypeScript client generated from the served ``/openapi.json`` (openapi-typescript +
openapi-fetch, clients/examples/ts) compiles under ``tsc --strict`` with no cast, its
types precise (a phase, a reason, an event's type are unions of their values; an
action is one kind), and plays against ``glintwick serve``: creates a game, joins both
seats, reads the phase, draws, and reads the reason of a stale move.

Skipped where ``node`` or ``npm`` is missing: ``make test`` installs Debian's (the
Makefile's ``node`` target), so in CI it runs (tests/support/ts_client.py)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import ts_client
from tests.support.outsider import Served, served

pytestmark = pytest.mark.skipif(
    ts_client.NODE is None or ts_client.NPM is None,
    reason="node and npm are not installed (`make node` installs Debian's; `make test` does)",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp("server"), "--no-bots") as running:
        yield running


@pytest.fixture(scope="module")
def document(server: Served) -> dict[str, Any]:
    with urllib.request.urlopen(f"{server.http}/openapi.json", timeout=10) as answer:
        served_document: dict[str, Any] = json.loads(answer.read())
        return served_document


def test_the_typed_client_compiles_strictly_and_plays(
    document: dict[str, Any], server: Served, tmp_path: Path
) -> None:
    compiled = ts_client.build(document, tmp_path)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    # no member of a oneof typed `unknown`: each alternative names the others `never`
    types = (tmp_path / "src" / "glintwick.d.ts").read_text()
    assert not re.search(r"\?: unknown;", types)
    said = ts_client.run(tmp_path, server.http)
    assert said["phase"] == "PHASE_DRAW" and said["version"] == "1"
    assert said["told"] and said["told"][0].startswith("drew")
    assert said["reason"] == "STALE_VERSION"


def test_a_looser_document_does_not_compile(document: dict[str, Any], tmp_path: Path) -> None:
    """The program's type checks can fail: with the error's reason a plain string (as
    before the reasons were listed), tsc refuses it."""
    loose = json.loads(json.dumps(document))
    reason = loose["components"]["schemas"]["Error"]["properties"]["reason"]
    del reason["enum"]
    compiled = ts_client.build(loose, tmp_path)
    assert compiled.returncode != 0
    program = (ts_client.EXAMPLE / "src" / "play.ts").read_text().splitlines()
    line = next(i for i, text in enumerate(program, 1) if "const reasonIsAClosedSet" in text)
    assert compiled.stdout.startswith(f"src/play.ts({line},"), compiled.stdout
