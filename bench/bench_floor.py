"""A Play move against the floor of its stack, on Redis, in one run.

* ``glintwick``: the games of ``bench.bench_play`` (2-seat whiskertrail, the greedy bot
  at every seat) on Play streams, prompts only, one stream a game, against a Glintwick
  server on Redis in a process of its own; the server's CPU (every thread, from
  /proc) per move, and the messages per move the client sent and received.
* ``floor``: a bare grpc.aio bidirectional stream (bench/floor_server.py) on the same
  Redis, in the same process layout: as many streams, as many moves, each move one
  message in (a PlayAct of a move's size), one EVALSHA and one message out (a real
  prompt of the same games); the floor server's CPU per move.

``ratio``: the Glintwick server's CPU per move / the floor's, the median of the
per-repeat ratios (the two alternate, so that both meet the same load).

    python -m bench.bench_floor [--games 6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import grpc
import redis

from bench.bench_play import _new_game, _play
from bench.bench_service import (
    NO_LIMITS,
    Server,
    _wait_ready,
    cpu_seconds,
    glintwick_server,
    served,
)
from clients.sdk import GlintwickClient
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.processes.child import ChildProcess
from loadtests.processes.ports import free_port
from loadtests.processes.redis import redis_server


async def _a_prompt(target: str) -> tuple[pb.PlayResponse, pb.PlayAct]:
    """A real prompt of these games (the floor's answer) and the act it was answered
    with (the floor's request), from one game's first moves."""
    client = GlintwickClient(target)
    seats = await _new_game(client, b"bench floor sample")
    channel = grpc.aio.insecure_channel(target)
    try:
        stub = pb_grpc.GameServiceStub(channel)
        requests: asyncio.Queue[pb.PlayRequest] = asyncio.Queue()
        for seat in seats:
            subscribe = pb.PlaySubscribe(
                game_id=seat.game_id, seat=seat.seat, token=seat.token, prompts_only=True
            )
            requests.put_nowait(pb.PlayRequest(subscribe=subscribe))

        async def sending() -> AsyncIterator[pb.PlayRequest]:
            while True:
                yield await requests.get()

        call = stub.Play(sending())
        async for message in call:
            if message.WhichOneof("kind") == "prompt":
                prompt = message.prompt
                act = pb.PlayAct(
                    game_id=message.game_id,
                    seat=message.seat,
                    expected_version=prompt.version,
                    request_id=uuid.uuid4().hex,
                    action=prompt.legal_actions[0],
                )
                call.cancel()
                return message, act
        raise RuntimeError("no prompt")
    finally:
        await channel.close()
        await client.close()


@contextlib.contextmanager
def floor_server(logs: Path, redis_url: str, reply: pb.PlayResponse) -> Iterator[Server]:
    """bench/floor_server.py for the block, answering with ``reply``, once it serves."""
    port = free_port()
    reply_file = logs / "floor-reply.bin"
    reply_file.write_bytes(reply.SerializeToString())
    command = [sys.executable, "-m", "bench.floor_server", "--port", str(port),
               "--redis", redis_url, "--reply", str(reply_file)]  # fmt: skip
    with ChildProcess(command, logs / "floor.log", env=NO_LIMITS) as process:
        target = f"127.0.0.1:{port}"
        asyncio.run(_wait_ready(target))  # (its first Ping loads the script)
        yield Server(target, process.pid)


async def _floor(target: str, act: pb.PlayAct, streams: int, moves: int) -> None:
    """``moves`` moves over ``streams`` streams, each move a message out and its answer."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.GameServiceStub(channel)

        async def stream(index: int, count: int) -> None:
            requests: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()

            async def sending() -> AsyncIterator[pb.PlayRequest]:
                while (request := await requests.get()) is not None:
                    yield request

            call = stub.Play(sending())
            mine = pb.PlayAct()
            mine.CopyFrom(act)
            mine.game_id = f"{act.game_id[:-4]}{index:04d}"
            for n in range(count):
                mine.request_id = uuid.uuid4().hex
                mine.expected_version = n
                requests.put_nowait(pb.PlayRequest(act=mine))
                await call.read()
            requests.put_nowait(None)
            await call.read()  # (EOF: the server's end of the stream)

        share, extra = divmod(moves, streams)
        await asyncio.gather(*(stream(i, share + (i < extra)) for i in range(streams)))


def _commands(client: redis.Redis) -> dict[str, int]:
    """Redis's count of each command so far (INFO commandstats)."""
    stats = cast(dict[str, Any], client.info("commandstats"))
    return {
        name.removeprefix("cmdstat_"): int(value["calls"])
        for name, value in stats.items()
        if name not in ("cmdstat_info",)
    }


def _commands_per_move(
    before: dict[str, int], after: dict[str, int], moves: int
) -> dict[str, float]:
    """Each command's count per move (those a script runs count too: EVALSHA's)."""
    counts = {name: (calls - before.get(name, 0)) / moves for name, calls in after.items()}
    return {name: round(count, 2) for name, count in sorted(counts.items()) if count > 0}


def _redis_cpu(client: redis.Redis) -> float:
    """Redis's own CPU time so far, in seconds (INFO cpu: its main thread and the rest)."""
    cpu = cast(dict[str, Any], client.info("cpu"))
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def _glintwick(server: Server, stats: redis.Redis, seeds: list[bytes]) -> dict[str, Any]:
    """One run of the games on Play streams: the server's CPU, the Redis commands and
    Redis's own CPU (whatever the server's store: the memory store's runs show Redis
    idle), and the messages, per move (from the games' creation on: their play alone)."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}

    def started() -> None:
        before["commands"] = _commands(stats)
        before["redis_cpu"] = _redis_cpu(stats)
        before["cpu"] = cpu_seconds(server.pid)

    def finished() -> None:  # (before the games' replays are read: play alone)
        after["cpu"] = cpu_seconds(server.pid)
        after["redis_cpu"] = _redis_cpu(stats)
        after["commands"] = _commands(stats)

    played = asyncio.run(
        _play(server.target, seeds, prompts_only=True, on_started=started, on_finished=finished)
    )
    moves = played["moves"]
    return {
        "cpu_us_per_move": _cpu_us(server.pid, before["cpu"], moves, after["cpu"]),
        "redis_cpu_us_per_move": round(1e6 * (after["redis_cpu"] - before["redis_cpu"]) / moves, 1),
        "redis_commands": _commands_per_move(before["commands"], after["commands"], moves),
        "sent_per_move": played["sent_per_move"],
        "received_per_move": played["received_per_move"],
        "moves": moves,
    }


def _cpu_us(pid: int, before: float | None, moves: int, after: float | None = None) -> float:
    """The process's CPU per move since ``before`` (until ``after``, else now)."""
    after = cpu_seconds(pid) if after is None else after
    assert before is not None and after is not None, "no /proc: no server CPU"
    return round(1e6 * (after - before) / moves, 1)


def run(games: int = 6, repeats: int = 3) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"glintwick": [], "floor": []}
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="glintwick-floor-")))
        redis_url = stack.enter_context(redis_server())
        stats = stack.enter_context(contextlib.closing(redis.Redis.from_url(redis_url)))
        server = stack.enter_context(served(glintwick_server(logs, redis_url)))
        reply, act = asyncio.run(_a_prompt(server.target))
        floor = stack.enter_context(floor_server(logs, redis_url, reply))
        asyncio.run(_play(server.target, [b"warm-up"], prompts_only=True))
        for _ in range(repeats):
            seeds = [f"bench play {n}".encode() for n in range(games)]
            runs["glintwick"].append(_glintwick(server, stats, seeds))
            moves = runs["glintwick"][-1]["moves"]
            start = cpu_seconds(floor.pid)
            asyncio.run(_floor(floor.target, act, games, moves))
            runs["floor"].append({"cpu_us_per_move": _cpu_us(floor.pid, start, moves)})
    ratios = [
        round(g["cpu_us_per_move"] / f["cpu_us_per_move"], 3)
        for g, f in zip(runs["glintwick"], runs["floor"], strict=True)
    ]

    def median(name: str, key: str) -> float:
        return round(float(statistics.median(r[key] for r in runs[name])), 2)

    ratio = statistics.median(ratios)
    print(f"Glintwick server CPU per move / floor CPU per move: {ratio:.2f}", flush=True)
    return {
        "games": games,
        "repeats": repeats,
        "reply_bytes": reply.ByteSize(),
        "act_bytes": pb.PlayRequest(act=act).ByteSize(),
        "glintwick_cpu_us_per_move": median("glintwick", "cpu_us_per_move"),
        "glintwick_cpu_us_range": [r["cpu_us_per_move"] for r in runs["glintwick"]],
        "redis_cpu_us_per_move": median("glintwick", "redis_cpu_us_per_move"),
        "floor_cpu_us_per_move": median("floor", "cpu_us_per_move"),
        "floor_cpu_us_range": [r["cpu_us_per_move"] for r in runs["floor"]],
        "sent_per_move": median("glintwick", "sent_per_move"),
        "received_per_move": median("glintwick", "received_per_move"),
        "redis_commands_per_move": runs["glintwick"][-1]["redis_commands"],
        "glintwick_cpu_per_move_vs_floor": ratio,
        "ratios": ratios,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(run(args.games, args.repeats), indent=2))
