"""Server instructions a Play move (valgrind's callgrind count: unlike CPU time, the
same on a loaded machine), for comparing two checkouts of the code.

The server (``glintwick serve``, the benchmarks' options, on the memory store or a
Redis of its own) runs under callgrind with instrumentation off; after a warm-up game
it is switched on (``callgrind_control -i on``) for ``bench.bench_play``'s games on
Play streams, prompts only (6 games: 3,318 moves), then dumped: its instructions over
that play phase, every thread, divided by the moves. Hash seed fixed.

    python -m bench.play_instructions [--tree .] [--store memory|redis] [--games 6]

``--tree``: the checkout whose server runs (its own ``.venv``); the client is this one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from bench.bench_floor import _commands, _commands_per_move
from bench.bench_play import _play
from bench.bench_service import NO_LIMITS
from loadtests.processes.redis import redis_server
from loadtests.processes.server import ServerProcess

STARTING_SECONDS = 600.0


class _Counted(ServerProcess):
    """A server run under callgrind, its instrumentation off until switched on."""

    def __init__(self, logs: Path, store: str, tree: Path) -> None:
        python = str(tree / ".venv" / "bin" / "python")
        super().__init__(
            logs, "--no-bots", "--rate", "0", "--event-loop", "auto", store=store,
            name="counted", python=python, root=tree, env={**NO_LIMITS, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
        self.out = logs / "callgrind.out"

    def command(self) -> list[str]:
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                    f"--callgrind-out-file={self.out}"]  # fmt: skip
        return valgrind + super().command()


def _control(*options: str) -> None:
    subprocess.run(["callgrind_control", *options], check=True, capture_output=True)


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith("totals:"):  # (its "summary:" is the instrumented-off time's)
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {dump}")


def count(tree: Path, store: str, games: int, keep: Path | None = None) -> dict[str, Any]:
    """``keep``: where to copy callgrind's dump of the play phase (for callgrind_annotate)."""
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="glintwick-cg-")))
        url = stack.enter_context(redis_server()) if store == "redis" else "memory"
        server = _Counted(logs, url, tree.resolve())
        stack.enter_context(server)
        server.wait_serving(STARTING_SECONDS)
        asyncio.run(_play(server.address, [b"warm-up"], prompts_only=True))
        pid = str(server.pid)
        stats = None
        if store == "redis":
            stats = stack.enter_context(contextlib.closing(redis.Redis.from_url(url)))
        before = _commands(stats) if stats is not None else {}
        _control("-i", "on", pid)
        seeds = [f"bench play {n}".encode() for n in range(games)]
        started = time.monotonic()
        played = asyncio.run(_play(server.address, seeds, prompts_only=True))
        _control("-i", "off", pid)
        _control("-d", pid)
        dumps = sorted(logs.glob("callgrind.out.*"), key=lambda p: p.stat().st_mtime)
        instructions = _total(dumps[-1])
        if keep is not None:
            shutil.copy(dumps[-1], keep)
        moves = int(played["moves"])
        commands = {} if stats is None else _commands_per_move(before, _commands(stats), moves)
    return {
        "tree": str(tree),
        "store": store,
        "moves": moves,
        "instructions_per_move": instructions // moves,
        "received_per_move": round(played["received_per_move"], 3),
        "redis_commands_per_move": commands,
        "seconds": round(time.monotonic() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path("."))
    parser.add_argument("--store", choices=["memory", "redis"], default="memory")
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--keep", type=Path, help="copy callgrind's dump of the play there")
    args = parser.parse_args()
    print(json.dumps(count(args.tree, args.store, args.games, args.keep)))
