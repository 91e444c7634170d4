"""buf: proto/ passes buf's STANDARD lint (with buf.yaml's documented exceptions) and
changes nothing the last released API (proto/released/) promised."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASED = "proto/released/glintwick-v1-0.2.0.binpb"
#: the release before, and what 0.2.0 broke of it on purpose (docs/API.md, "Changes in
#: 0.2.0"): the Struct `Event.data` became the typed `Event.payload`, and the two
#: `bytes` seeds became lowercase-hex strings under new field numbers
PREVIOUS = "proto/released/glintwick-v1-0.1.0.binpb"
BREAKS_OF_0_2_0 = {
    ("FIELD_NO_DELETE", 'field "4" with name "seed" on message "CreateGameRequest"'),
    ("FIELD_NO_DELETE", 'field "4" with name "data" on message "Event"'),
    ("FIELD_NO_DELETE", 'field "2" with name "seed" on message "Replay"'),
}


def _buf() -> str:
    beside = Path(sys.executable).with_name("buf")
    found = str(beside) if beside.exists() else shutil.which("buf")
    assert found, "buf is missing: it comes with the dev extra (PyPI buf-bin)"
    return found


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_buf(), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_proto_passes_buf_lint() -> None:
    result = buf("lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_proto_breaks_nothing_of_the_last_release() -> None:
    result = buf("breaking", "--against", RELEASED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_against_0_1_0_exactly_the_documented_breaks_are_reported() -> None:
    result = buf("breaking", "--against", PREVIOUS, "--error-format", "json")
    assert result.returncode != 0, "0.2.0's documented breaks are gone: update the test"
    found = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    reported = {(f["type"], f["message"]) for f in found}
    expected = {(kind, f"Previously present {what} was deleted.") for kind, what in BREAKS_OF_0_2_0}
    assert reported == expected, result.stdout + result.stderr
    assert len(found) == len(expected)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    return tmp_path


def _edit(copy: Path, old: str, new: str) -> None:
    path = copy / "proto" / "glintwick" / "v1" / "game.proto"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_renumbered_field_is_a_breaking_change(copy: Path) -> None:
    _edit(copy, "message Game {\n  string game_id = 1;", "message Game {\n  string game_id = 99;")
    result = buf("breaking", "--against", str(ROOT / RELEASED), cwd=copy)
    assert result.returncode != 0
    assert "game_id" in result.stdout + result.stderr


def test_a_badly_named_message_fails_the_lint(copy: Path) -> None:
    _edit(copy, "message PingRequest {}", "message PingRequest {}\n\nmessage bad_name {}")
    result = buf("lint", cwd=copy)
    assert result.returncode != 0
    assert "bad_name" in result.stdout
