"""buf: proto/ passes buf's STANDARD lint (with buf.yaml's documented exceptions),
changes nothing the last released API (proto/released/) promised, and each release
broke of the one before exactly what docs/API.md's "Changes in X" lists.

A new release: bump ``pyproject.toml``'s version, ``make release-proto`` (the image of
proto/ as ``proto/released/glintwick-v1-VERSION.binpb``), and its entry in
:data:`BREAKS` with what ``buf breaking`` reports against the release before."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "proto" / "released"


def _image_config() -> str:
    """buf.yaml's breaking rules for two images, whose files are named from the
    module's root (``glintwick/storage``, which buf.yaml ignores as ``proto/…``: the
    server's stored messages are no API)."""
    breaking = yaml.safe_load((ROOT / "buf.yaml").read_text())["breaking"]
    ignored = [path.removeprefix("proto/") for path in breaking.get("ignore", [])]
    return json.dumps({"version": "v2", "breaking": {**breaking, "ignore": ignored}})


def _deleted(number: int, name: str, message: str) -> tuple[str, str]:
    return (
        "FIELD_NO_DELETE",
        f'Previously present field "{number}" with name "{name}" on message "{message}"'
        " was deleted.",
    )


def _retyped(number: int, name: str, message: str, before: str, after: str) -> tuple[str, str]:
    return (
        "FIELD_SAME_TYPE",
        f'Field "{number}" with name "{name}" on message "{message}" changed type'
        f' from "{before}" to "{after}".',
    )


def _given_presence(number: int, name: str, message: str) -> tuple[str, str]:
    return (
        "FIELD_SAME_CARDINALITY",
        f'Field "{number}" with name "{name}" on message "{message}" changed cardinality'
        ' from "optional with implicit presence" to "optional with explicit presence".',
    )


#: every release, oldest first, with what it broke of the release before on purpose
#: (docs/API.md, "Changes in X"), as `buf breaking` reports each break: its rule and
#: its message
BREAKS: dict[str, set[tuple[str, str]]] = {
    "0.1.0": set(),
    # the Struct `Event.data` became the typed `Event.payload`; the two `bytes` seeds
    # became lowercase-hex strings under new field numbers
    "0.2.0": {
        _deleted(4, "seed", "CreateGameRequest"),
        _deleted(4, "data", "Event"),
        _deleted(2, "seed", "Replay"),
    },
    # the closed sets named by strings became enums under new field numbers; a meld's
    # owner, a seat, became an optional uint32 (absent: laid by nobody)
    "0.3.0": {
        _deleted(27, "stalemate", "RuleSet"),
        _deleted(10, "phase", "View"),
        _deleted(2, "type", "Event"),
        _deleted(2, "reason", "RoundEndedEvent"),
        _deleted(2, "answer", "ClaimAnswerInfo"),
        _retyped(5, "owner", "Meld", "int32", "uint32"),
        _given_presence(5, "owner", "Meld"),
    },
}


def image(version: str) -> Path:
    return IMAGES / f"glintwick-v1-{version}.binpb"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


RELEASES = sorted(BREAKS, key=_version_key)
LAST = RELEASES[-1]


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


def test_every_release_image_has_its_breaks_listed() -> None:
    names = sorted(path.name for path in IMAGES.glob("*.binpb"))
    assert names == sorted(image(version).name for version in RELEASES)


def test_the_proto_breaks_nothing_of_the_last_release() -> None:
    result = buf("breaking", "--against", str(image(LAST).relative_to(ROOT)))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("before", "release"), list(itertools.pairwise(RELEASES)), ids=RELEASES[1:]
)
def test_a_release_breaks_exactly_its_listed_breaks(before: str, release: str) -> None:
    result = buf(
        "breaking", str(image(release)), "--against", str(image(before)),
        "--config", _image_config(), "--error-format", "json",
    )  # fmt: skip
    found = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    reported = {(f["type"], f["message"]) for f in found}
    assert reported == BREAKS[release], result.stdout + result.stderr
    assert len(found) == len(BREAKS[release])
    assert (result.returncode != 0) == bool(BREAKS[release]), result.stderr


def test_the_release_of_this_version_is_the_proto_now(tmp_path: Path) -> None:
    """While ``pyproject.toml`` names a released version, its image is proto/'s API
    (comments aside): a change after it is released again (`make release-proto`),
    so its listed breaks above are all it breaks."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    if not image(version).exists():  # the next release, in the making
        assert _version_key(version) > _version_key(LAST), version
        return
    fresh = tmp_path / "now.binpb"
    result = buf("build", "-o", str(fresh))
    assert result.returncode == 0, result.stderr
    assert _api(fresh) == _api(image(version)), f"run `make release-proto VERSION={version}`"


def _api(path: Path) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    files = descriptor_pb2.FileDescriptorSet.FromString(path.read_bytes())
    api = {}
    for file in files.file:
        file.ClearField("source_code_info")
        api[file.name] = file
    return api


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
    result = buf("breaking", "--against", str(image(LAST)), cwd=copy)
    assert result.returncode != 0
    assert "game_id" in result.stdout + result.stderr


def test_a_badly_named_message_fails_the_lint(copy: Path) -> None:
    _edit(copy, "message PingRequest {}", "message PingRequest {}\n\nmessage bad_name {}")
    result = buf("lint", cwd=copy)
    assert result.returncode != 0
    assert "bad_name" in result.stdout
