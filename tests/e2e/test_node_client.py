"""A client in another language plays a whole game: the Node.js example
(``clients/examples/node/play.js``, grpc-js with proto-loader reading ``proto/`` at run
time, no generated code) against a real ``glintwick serve``.  It joins both seats of a
whiskertrail table, reads a refused join's reason from the status's
``google.rpc.ErrorInfo`` (the vendored ``proto/google/rpc`` files), plays both seats over
one Play stream until each session is closed, and prints the game's end as JSON, which
is checked here against the server's own view of the game.

Skipped where ``node`` or ``npm`` is missing: ``make test`` installs Debian's (the
Makefile's ``node`` target), so in CI it runs.  The example's packages are installed with
``npm ci`` from its committed lockfile into its (git-ignored) ``node_modules``, once per
lockfile.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.processes.child import ROOT
from loadtests.processes.server import ServerProcess

EXAMPLE = ROOT / "clients" / "examples" / "node"
NODE = shutil.which("node")
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None,
    reason="node and npm are not installed (`make node` installs Debian's; `make test` does)",
)

#: the seed of the game the client plays (lowercase hex, as CreateGame takes it)
SEED = "5eedc0de"
#: how the client's Play stream ends once it has half-closed it after every session's
#: `closed`: "ok", the server's status (never "cancelled": the client giving up waiting
#: for a status that never comes and cancelling the call)
STREAM_ENDS = {"ok"}


def install_packages() -> None:
    """``npm ci`` of the example's lockfile, skipped when node_modules holds that
    lockfile's install already (a stamp of its SHA-256, written after it succeeded)."""
    assert NPM is not None
    digest = hashlib.sha256((EXAMPLE / "package-lock.json").read_bytes()).hexdigest()
    stamp = EXAMPLE / "node_modules" / ".glintwick-lockfile.sha256"
    if stamp.exists() and stamp.read_text() == digest:
        return
    # (no install scripts: the packages are plain JavaScript and need none)
    command = [NPM, "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
    done = subprocess.run(command, cwd=EXAMPLE, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    stamp.write_text(digest)


def spectator_view(address: str, game_id: str) -> pb.View:
    """The game as anyone may read it from the server (no token: a spectator's view)."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        view: pb.View = stub.GetView(pb.GetViewRequest(game_id=game_id), timeout=10)
        return view


def test_the_node_client_plays_a_whole_game_over_one_play_stream(tmp_path: Path) -> None:
    assert NODE is not None
    install_packages()
    with ServerProcess(tmp_path) as server:
        command = [NODE, "play.js", "--target", server.address, "--seed", SEED]
        played = subprocess.run(command, cwd=EXAMPLE, capture_output=True, text=True, timeout=150)
        assert played.returncode == 0, played.stdout + played.stderr
        summary: dict[str, Any] = json.loads(played.stdout.splitlines()[-1])
        view = spectator_view(server.address, summary["game_id"])

    # the whole game, as the client saw it end and as the server has it
    assert summary["game_over"] is True
    assert view.game_over and not view.abandoned
    assert summary["version"] == view.version > 0
    assert summary["rounds"] == view.rounds == view.round
    assert summary["seed"] == view.seed == SEED
    assert summary["scores"] == {str(player.seat): player.score for player in view.players}
    assert summary["winners"] == list(view.winners) != []

    # both seats played over the stream: each prompt answered by an act that was applied,
    # every action of the game one of theirs, and each session closed with the game's end
    seats = summary["seats"]
    assert set(seats) == {"0", "1"}
    for seat in seats.values():
        assert seat["game_over"] is True
        assert seat["prompts"] == seat["applied"] > 0
    assert sum(seat["applied"] for seat in seats.values()) == view.version
    assert summary["play_refusals"] == []

    # the refusal, as the client read it from the trailer's google.rpc.ErrorInfo
    refused = summary["refused_join"]
    assert refused["call"] == "JoinGame"
    assert refused["code"] == "FAILED_PRECONDITION"
    assert refused["reason"] == "GAME_FULL"
    assert refused["domain"] == "glintwick.dev"
    assert refused["listed"] is True  # a value of glintwick.v1.ErrorReason (errors.proto)

    assert summary["stream_end"] in STREAM_ENDS
