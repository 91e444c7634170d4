"""Service throughput on this machine, against baselines measured in the same run.

Servers run as separate processes (a real redis-server on a free port, the
Glintwick server with the Redis store, two baseline servers); one asyncio load
generator with ``concurrency`` callers drives each for ``seconds``.  The load
generator shares the two cores with the servers: absolute numbers understate a
dedicated server, the ratios are what to read.

* ``ping``: the empty RPC on the Glintwick server (the cost of gRPC itself);
* ``baseline_empty`` / ``baseline_getset``: a bare grpc.aio server, doing nothing /
  one Redis GET and SET per call;
* ``analyse``: AnalyseHand over the conformance corpus hands (full: best melds,
  ``missing`` and outs); ``analyse_best_only``: the same with ``best_only``;
* ``submit``: SubmitAction on 2-seat whiskertrail games of random legal moves (each
  table's moves worked out with the engine before the clock starts, so no extra
  RPCs and no engine time while measured);
* ``submit_workers2``: the same against ``--workers 2``;
* ``ping_standard_loop`` / ``submit_standard_loop``: Ping and SubmitAction on a
  server running asyncio's standard event loop instead of uvloop.

Every server and baseline runs on the same event loop (``--event-loop``, uvloop by
default) except that last one.

    python -m bench.bench_service [--seconds 3] [--rounds 9] [--concurrency 16]
                                  [--event-loop auto|uvloop|asyncio]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import grpc

from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from glintwick.convert import action_to_pb
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.processes.child import ChildProcess
from loadtests.processes.ports import free_port
from loadtests.processes.redis import redis_server
from loadtests.processes.server import ServerProcess

ROOT = Path(__file__).parents[1]
CORPUS = ROOT / "tests" / "data" / "solver-cases.jsonl"
CHANNELS = 4


class Server(NamedTuple):
    target: str  # host:port
    pid: int


#: the servers measured run without rate limits and quotas (docs/OPERATIONS.md): the
#: benchmarks' clients flood from one address, which the limits exist to refuse.  (As
#: variables, not flags: a tree from before the limits, measured by against_tree.py,
#: ignores them.)
NO_LIMITS = {"GLINTWICK_LIMITS": "off", "GLINTWICK_QUOTAS": "off"}


def glintwick_server(
    logs: Path,
    store: str,
    workers: int = 1,
    event_loop: str | None = "auto",
    *,
    name: str = "",
    python: str = sys.executable,
    root: Path = ROOT,
) -> ServerProcess:
    """A Glintwick server as the benchmarks measure it (no house bots, no rate limit,
    no quota), not started: ``with`` it (``python``/``root``: another checkout's)."""
    options = ["--no-bots", "--rate", "0"]
    if event_loop is not None:
        options += ["--event-loop", event_loop]
    name = name or f"glintwick-{workers}-{event_loop or 'default'}"
    return ServerProcess(
        logs, *options, store=store, workers=workers, name=name, python=python, root=root,
        env=NO_LIMITS,
    )  # fmt: skip


@contextlib.contextmanager
def served(server: ServerProcess) -> Iterator[Server]:
    """``server`` started (until it serves) for the block, as the measures see it."""
    with server:
        yield Server(server.address, server.pid)


@contextlib.contextmanager
def baseline_server(
    logs: Path, redis_url: str | None, event_loop: str = "auto"
) -> Iterator[Server]:
    """A baseline server (bench/baseline_server.py) for the block, once it answers Ping."""
    port = free_port()
    command = [sys.executable, "-m", "bench.baseline_server", "--port", str(port),
               "--event-loop", event_loop]  # fmt: skip
    if redis_url:
        command += ["--redis", redis_url]
    log = logs / f"baseline-{'getset' if redis_url else 'empty'}-{event_loop}.log"
    with ChildProcess(command, log, env=NO_LIMITS) as process:
        target = f"127.0.0.1:{port}"
        asyncio.run(_wait_ready(target))
        yield Server(target, process.pid)


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) of a process and its descendants so far (the
    ``--workers`` processes are children of the one started); None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                for child in children.read().split():
                    total += cpu_seconds(int(child)) or 0.0
    except (OSError, IndexError, ValueError):
        return None
    return total


def _measure(
    server: Server, seconds: float, concurrency: int, make: Callable[[int], Call]
) -> dict[str, Any]:
    """One run of ``make``'s calls against ``server``, with the server's CPU time per
    call (µs; every thread of the server, gRPC's poller included): a cost less
    sensitive than throughput to how the two cores were shared with the load
    generator (caches and clock speed still move it)."""
    before = cpu_seconds(server.pid)
    result = asyncio.run(_drive(server.target, seconds, concurrency, make))
    after = cpu_seconds(server.pid)
    if before is not None and after is not None and result["calls"]:
        result["server_cpu_us"] = round(1e6 * (after - before) / result["calls"], 1)
    return result


async def _wait_ready(target: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        async with grpc.aio.insecure_channel(target) as channel:
            try:
                await pb_grpc.GameServiceStub(channel).Ping(pb.PingRequest(), timeout=1)
                return
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.2)
    raise RuntimeError(f"server at {target} did not come up")


Call = Callable[["pb_grpc.GameServiceAsyncStub", int], Awaitable[None]]  # a stub-only type


async def _drive(
    target: str, seconds: float, concurrency: int, make: Callable[[int], Call]
) -> dict[str, Any]:
    latencies: list[float] = []
    # several connections (each its own subchannel), so that ``--workers N``
    # processes sharing the port by SO_REUSEPORT all get some of them
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(CHANNELS)]
    try:
        stubs: list[pb_grpc.GameServiceAsyncStub] = [
            pb_grpc.GameServiceStub(channel) for channel in channels
        ]
        stop_at = time.perf_counter() + seconds

        async def worker(index: int) -> None:
            stub = stubs[index % len(stubs)]
            call = make(index)
            n = 0
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                await call(stub, n)
                latencies.append(time.perf_counter() - started)
                n += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - started
    finally:
        for channel in channels:
            await channel.close()
    latencies.sort()
    return {
        "calls": len(latencies),
        "per_second": round(len(latencies) / elapsed),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2),
    }


# Requests with fixed contents are built once, as a load generator with fixed
# payloads does: the generator shares the two cores with the server, and building
# each AnalyseHand request again per call cost the measured throughput several
# per cent here (measured on the load generator, not on the server).
_PING = pb.PingRequest()


def _ping(_: int) -> Call:
    async def call(stub: pb_grpc.GameServiceAsyncStub, n: int) -> None:
        await stub.Ping(_PING, timeout=10)

    return call


def _analyse_factory(best_only: bool = False) -> Callable[[int], Call]:
    hands = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    requests = [
        pb.AnalyseHandRequest(
            rule_set_name=case["ruleset"],
            round=case["round"],
            hand=case["hand"],
            best_only=best_only,
        )
        for case in hands
    ]

    def make(index: int) -> Call:
        async def call(stub: pb_grpc.GameServiceAsyncStub, n: int) -> None:
            await stub.AnalyseHand(requests[(index * 7919 + n) % len(requests)], timeout=10)

        return call

    return make


def _random_game(seed: bytes) -> Iterator[tuple[int, pb.Action]]:
    """A 2-seat whiskertrail game of random legal moves, as (seat, action) pairs: the
    server deals the same game from the same seed, so every move is legal there."""
    rng = random.Random(seed)
    state = GameState.new_game(WHISKERTRAIL, 2, seed)
    while not state.is_terminal():
        seat = state.to_act[0]
        action = rng.choice(state.legal_actions(seat))
        yield seat, action_to_pb(action)
        state, _ = state.apply_action(seat, action)


class _Table:
    """One 2-seat game the load generator plays.  Its first game's moves are worked
    out with the engine before the clock starts: the generator shares the two cores
    with the server, and working each move out while measured cost it about a fifth
    of its time per call (cProfile).  A random game runs to some 3,000 moves, more
    than a table plays in the whole benchmark; a later game is worked out as played."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.games = 0
        self.game_id = ""
        self.tokens: list[str] = []
        self.version = 0
        self.moves: Iterator[tuple[int, pb.Action]] = iter(list(_random_game(self._seed())))
        self.move: tuple[int, pb.Action] | None = None

    def _seed(self) -> bytes:
        return f"bench/{self.index}/{self.games}".encode()

    async def next_move(self, stub: pb_grpc.GameServiceAsyncStub) -> tuple[int, pb.Action]:
        """The move to submit now (created and joined the table's game if need be)."""
        if self.move is None:
            self.move = next(self.moves, None)
            if self.move is None:  # the game is over: the next one, played as worked out
                self.games += 1
                self.moves = _random_game(self._seed())
                self.game_id = ""
                return await self.next_move(stub)
        if not self.game_id:
            game = await stub.CreateGame(
                pb.CreateGameRequest(
                    rule_set_name="whiskertrail", seats=2, seed=self._seed().hex()
                ),
                timeout=10,
            )
            self.tokens = []
            for _ in range(2):
                joined = await stub.JoinGame(pb.JoinGameRequest(game_id=game.game_id), timeout=10)
                self.tokens.append(joined.token)
            self.game_id = game.game_id
            self.version = 0
        return self.move


class _SubmitLoad:
    """``make`` for SubmitAction: a table (one game at a time) per caller."""

    def __init__(self, concurrency: int) -> None:
        self.tables = {index: _Table(index) for index in range(concurrency)}

    def __call__(self, index: int) -> Call:
        table = self.tables[index]

        async def call(stub: pb_grpc.GameServiceAsyncStub, n: int) -> None:
            seat, action = await table.next_move(stub)
            request = pb.SubmitActionRequest(
                game_id=table.game_id,
                expected_version=table.version,
                request_id=f"{table.game_id}-{table.version}",
                action=action,
            )
            metadata = (("authorization", f"Bearer {table.tokens[seat]}"),)
            await stub.SubmitAction(request, metadata=metadata, timeout=10)
            table.version += 1
            table.move = None

        return call


RATIOS = {
    "analyse_vs_ping": ("analyse", "ping"),
    "analyse_best_only_vs_ping": ("analyse_best_only", "ping"),
    "submit_vs_baseline_getset": ("submit", "baseline_getset"),
    "ping_vs_baseline_empty": ("ping", "baseline_empty"),
    "submit_workers2_vs_workers1": ("submit_workers2", "submit"),
    "ping_vs_standard_loop": ("ping", "ping_standard_loop"),
    "submit_vs_standard_loop": ("submit", "submit_standard_loop"),
}


def run(
    seconds: float = 3.0, concurrency: int = 16, rounds: int = 9, event_loop: str = "auto"
) -> dict[str, Any]:
    """Every server up at once; ``rounds`` rounds of every measurement, interleaved, so
    that a ratio compares two runs a few seconds apart.  Medians over the rounds (nine
    of three seconds: with the load generator sharing the two cores, one round's ratio
    strays by 0.1 or more either way here, and more rounds steady the median better
    than longer ones).  The baselines run on the server's event loop (``event_loop``:
    uvloop by default); one more server on the standard loop measures what uvloop
    brings (``*_standard_loop``)."""
    results: dict[str, Any] = {
        "seconds": seconds,
        "concurrency": concurrency,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "event_loop": event_loop,
    }
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="glintwick-bench-")))
        redis_url = stack.enter_context(redis_server())
        empty = stack.enter_context(baseline_server(logs, None, event_loop))
        getset = stack.enter_context(baseline_server(logs, redis_url, event_loop))
        one = stack.enter_context(served(glintwick_server(logs, redis_url, 1, event_loop)))
        two = stack.enter_context(served(glintwick_server(logs, redis_url, 2, event_loop)))
        standard = stack.enter_context(served(glintwick_server(logs, redis_url, 1, "asyncio")))
        plan: list[tuple[str, Server, Callable[[int], Call]]] = [
            ("baseline_empty", empty, _ping),
            ("baseline_getset", getset, _ping),
            ("ping", one, _ping),
            ("analyse", one, _analyse_factory()),
            ("analyse_best_only", one, _analyse_factory(best_only=True)),
            ("submit", one, _SubmitLoad(concurrency)),
            ("submit_workers2", two, _SubmitLoad(concurrency)),
            ("ping_standard_loop", standard, _ping),
            ("submit_standard_loop", standard, _SubmitLoad(concurrency)),
        ]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in plan}
        for _ in range(rounds):
            for name, server, make in plan:
                runs[name].append(_measure(server, seconds, concurrency, make))
    for name, measured in runs.items():
        results[name] = {
            key: statistics.median(m[key] for m in measured)
            for key in ("per_second", "p50_ms", "p99_ms", "server_cpu_us")
            if all(key in m for m in measured)
        } | {"calls": sum(m["calls"] for m in measured)}
    results["ratios"] = {
        key: round(
            statistics.median(
                a["per_second"] / b["per_second"] for a, b in zip(runs[x], runs[y], strict=True)
            ),
            2,
        )
        for key, (x, y) in RATIOS.items()
    }
    results["ratios_by_round"] = {
        key: [
            round(a["per_second"] / b["per_second"], 2)
            for a, b in zip(runs[x], runs[y], strict=True)
        ]
        for key, (x, y) in RATIOS.items()
    }
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--event-loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    options = parser.parse_args()
    print(
        json.dumps(
            run(options.seconds, options.concurrency, options.rounds, options.event_loop), indent=2
        )
    )
