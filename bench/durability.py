"""`make bench-durability`: what each durability mode costs and what a crash loses.

Modes (docs/OPERATIONS.md, "Durability"):

* ``none``: Redis without persistence (the dev overlay's);
* ``everysec``: AOF, ``appendfsync everysec``;
* ``always``: AOF, ``appendfsync always`` (an fsync per write before its answer);
* ``replica``: a primary and a replica (no persistence), the server run with
  ``--ack replica`` (each write answered after ``WAIT 1``);
* ``replica-async``: the same pair with ``--ack local`` (asynchronous replication):
  what a failover loses without WAIT.

Cost: moves/s of ``--tables`` tables played as fast as they can (the random bot, by the
table core's unary runner over the SDK) through one ``glintwick serve`` per mode;
every mode's tables stay open and the modes take turns, a ``--seconds`` slice each,
for ``--rounds`` rounds (so that the machine's other load falls on every mode alike);
the median of a mode's slices and its ratio to ``none``'s median.

Loss: per mode, tables play; mid-run Redis is SIGKILLed (with ``replica*``: the
primary, then the replica is promoted by ``REPLICAOF NO ONE`` and the server
restarted on it) and restarted from its data directory; then each game's log is
read from the store and every move the clients had acknowledged (a success answer)
is looked up in it.  The promise: the strictest mode (``always``, and ``replica``
for a failover) loses 0 acknowledged moves.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import grpc
import structlog

from clients.bots.random_bot import RandomBot
from clients.runners import Hooks, UnaryRunner
from clients.sdk import CallError, GlintwickClient, RetryPolicy
from clients.table import Act, Table
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from loadtests.faults.campaign import RULES
from loadtests.processes.redis import RedisProcess
from loadtests.processes.server import UNLIMITED, ServerProcess
from services.store.base import LogItem, StoreUnavailableError, Write
from services.store.redis import RedisStore

T = TypeVar("T")

MODES = ("none", "everysec", "always", "replica", "replica-async")


@dataclass
class Mode:
    """A mode's Redis (a replica too for ``replica*``) and its server."""

    name: str
    workdir: Path
    primary: RedisProcess = field(init=False)
    replica: RedisProcess | None = field(init=False, default=None)
    server: ServerProcess | None = field(init=False, default=None)
    closers: list[Callable[[], Awaitable[None]]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        persistence = self.name if self.name in ("everysec", "always") else "none"
        self.primary = RedisProcess(self.workdir / "primary", persistence)
        if self.name.startswith("replica"):
            self.replica = RedisProcess(
                self.workdir / "replica", persistence, replica_of=self.primary
            )

    def start(self) -> None:
        self.primary.start()
        if self.replica is not None:
            self.replica.start()
            self.replica.wait_linked()
        self.start_server(self.primary.url)

    def start_server(self, url: str) -> None:
        ack = ["--ack", "replica", "--ack-timeout-ms", "1000"] if self.name == "replica" else []
        self.server = ServerProcess(
            self.workdir, *UNLIMITED, *ack, store=url, name=f"server-{self.name}"
        )
        self.server.start()

    def crash(self) -> str:
        """SIGKILL the store (the primary) and bring it back; the URL to check."""
        self.primary.kill()
        if self.replica is None:
            self.primary.start(timeout=60)
            return self.primary.url
        assert self.server is not None
        self.replica.promote()
        self.server.stop()  # (clients pointed at the promoted replica: a new server)
        self.start_server(self.replica.url)
        return self.replica.url

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.replica is not None:
            self.replica.stop()
        self.primary.stop()


@dataclass
class Load:
    """Tables played as fast as they can; each acknowledged move recorded."""

    target: str
    acked: dict[str, dict[int, str]] = field(default_factory=dict)  # game → version → key
    moves: int = 0
    errors: int = 0
    running: bool = True
    # the tables play only while set: the modes take turns, a slice each
    active: asyncio.Event = field(default_factory=asyncio.Event)
    client: GlintwickClient = field(init=False)
    workers: list[asyncio.Task[None]] = field(init=False, default_factory=list)

    async def table(self, client: GlintwickClient, rng: random.Random) -> None:
        """One game played to its end (or until the load stops) by the table core's
        unary runner, the random bot at both seats."""
        game = await client.create_game(convert.rules_to_pb(RULES), seats=2, seed=uuid.uuid4().hex)
        seats = [await client.join(game.game_id, seat=s) for s in range(2)]
        table = Table(max_failures=None)  # (a refusal in a crash is the point: play on)
        for seat in seats:
            bot = RandomBot()
            bot.setup(RULES, seat.seat)
            table.sit(game.game_id, seat.seat, bot, rng)
        paced = _Paced(self, self.acked.setdefault(game.game_id, {}))
        with contextlib.suppress(_Stopped):
            await UnaryRunner(table, seats, paced).run()

    async def start(self, tables: int) -> None:
        """Start ``tables`` tables (replaced as they end); they play while :attr:`active`."""
        self.client = GlintwickClient(self.target, retry=RetryPolicy(attempts=3, timeout=5))
        rng = random.Random(18)

        async def keep_playing() -> None:
            while self.running:
                with contextlib.suppress(CallError):
                    await self.table(self.client, rng)

        self.workers = [asyncio.create_task(keep_playing()) for _ in range(tables)]

    async def measure(self, seconds: float) -> float:
        """Moves/s over ``seconds`` of play (after a short ramp), then paused again."""
        self.active.set()
        try:
            await asyncio.sleep(0.3)
            start, before = time.monotonic(), self.moves
            await asyncio.sleep(seconds)
            return (self.moves - before) / (time.monotonic() - start)
        finally:
            self.active.clear()

    async def stop(self) -> None:
        self.running = False
        self.active.set()
        await asyncio.wait(self.workers, timeout=10)
        for worker in self.workers:
            worker.cancel()
        await self.client.close()


class _Stopped(Exception):
    """The load stopped: the table leaves its game."""


class _Paced(Hooks):
    """A load's table's calls: each waits while the load is paused and ends the table
    once it stops; a refused call is counted and, after a short pause, tried again (a
    refused act goes to the table core, which reads the view again); each
    acknowledged move is recorded by its version (``acked``: version → key)."""

    def __init__(self, load: Load, acked: dict[int, str]) -> None:
        self.load = load
        self.acked = acked

    async def call(self, name: str, call: Callable[[], Awaitable[T]], act: Act | None = None) -> T:
        while True:
            await self.load.active.wait()
            if not self.load.running:
                raise _Stopped
            try:
                answer = await call()
            except CallError:
                self.load.errors += 1
                await asyncio.sleep(0.05)
                if act is not None:
                    raise
                continue
            if act is not None:
                self.acked[cast(int, answer)] = f"{act.seat}:{act.request_id}"
                self.load.moves += 1
            return answer


async def store_commits(mode: Mode, writers: int) -> Callable[[float], Awaitable[float]]:
    """A slice measure of the store alone (no server, no gRPC: less of the machine's noise
    around Redis's own cost): ``writers`` games committed one move after another."""
    store = RedisStore(mode.primary.url, ack_replicas=1 if mode.name == "replica" else 0)
    record, entry = b"r" * 600, b"e" * 200  # (about a move's record and log entry)
    revisions = [1] * writers
    for w in range(writers):
        await store.create(f"bench-{w}", Write(record))

    async def measure(seconds: float) -> float:
        done = 0
        end = time.monotonic() + seconds

        async def writer(w: int) -> None:
            nonlocal done
            while time.monotonic() < end:
                version = revisions[w]
                write = Write(record, LogItem(version, entry), f"0:{uuid.uuid4().hex}", b"ok")
                assert await store.commit(f"bench-{w}", version, write)
                revisions[w] += 1
                done += 1

        start = time.monotonic()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        return done / (time.monotonic() - start)

    mode.closers.append(store.close)
    return measure


def summary(rates: dict[str, list[float]]) -> dict[str, Any]:
    """Per mode: the slices, their median and its ratio to ``none``'s."""
    medians = {name: statistics.median(r) for name, r in rates.items()}
    base = medians.get("none")
    return {
        name: {
            "per_s": rates[name],
            "median": round(medians[name], 1),
            **({"ratio_to_none": round(medians[name] / base, 3)} if base else {}),
        }
        for name in rates
    }


async def interleaved(
    measures: Mapping[str, Callable[[float], Awaitable[float]]], rounds: int, seconds: float
) -> dict[str, list[float]]:
    """Each mode's measure in turn, a slice each, ``rounds`` times (the order reversed
    every other round)."""
    rates: dict[str, list[float]] = {name: [] for name in measures}
    names = list(measures)
    for round_number in range(rounds):
        for name in names if round_number % 2 == 0 else names[::-1]:
            rates[name].append(round(await measures[name](seconds), 1))
        print(
            f"  round {round_number + 1}: " + ", ".join(f"{n} {rates[n][-1]:.0f}" for n in names),
            flush=True,
        )
    return rates


async def lost_moves(url: str, acked: dict[str, dict[int, str]]) -> int:
    """The acknowledged moves that the store's logs do not hold."""
    store = RedisStore(url)
    lost = 0
    try:
        deadline = time.monotonic() + 60
        while True:  # (a restarted Redis answers LOADING until its AOF is read)
            try:
                await store.read_log("-", 0)
                break
            except StoreUnavailableError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        for game_id, moves in acked.items():
            entries = [spb.LogEntry.FromString(i.entry) for i in await store.read_log(game_id, 0)]
            logged = {e.version: e.request_id for e in entries}
            lost += sum(1 for v, key in moves.items() if logged.get(v) != key)
    finally:
        await store.close()
    return lost


async def crash_run(mode: Mode, tables: int, seconds: float) -> dict[str, Any]:
    assert mode.server is not None
    load = Load(mode.server.address)
    load.active.set()
    client = GlintwickClient(mode.server.address, retry=RetryPolicy(attempts=1, timeout=2))
    rng = random.Random(7)

    async def keep_playing() -> None:
        while load.running:
            with contextlib.suppress(CallError, grpc.aio.UsageError):
                await load.table(client, rng)

    workers = [asyncio.create_task(keep_playing()) for _ in range(tables)]
    await asyncio.sleep(seconds)
    url = await asyncio.to_thread(mode.crash)  # (mid-run: the tables are acting)
    load.running = False
    await asyncio.wait(workers, timeout=10)
    for worker in workers:
        worker.cancel()
    await client.close()
    acked = sum(len(m) for m in load.acked.values())
    return {"acknowledged": acked, "lost": await lost_moves(url, load.acked)}


async def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    modes = [Mode(name, workdir / name) for name in args.modes]
    try:
        for mode in modes:
            await asyncio.to_thread(mode.start)
        store_measures = {m.name: await store_commits(m, args.tables) for m in modes}
        print("store commits/s:", flush=True)
        store_cost = summary(await interleaved(store_measures, args.rounds, args.seconds / 2))
        loads = {m.name: Load(m.server.address) for m in modes if m.server is not None}
        for load in loads.values():
            await load.start(args.tables)
            await load.measure(1.0)  # (tables created, connections open)
        try:
            print("moves/s through the server:", flush=True)
            measures = {name: load.measure for name, load in loads.items()}
            cost = summary(await interleaved(measures, args.rounds, args.seconds))
        finally:
            for load in loads.values():
                await load.stop()
        print(json.dumps({"store_commits": store_cost, "moves": cost}, indent=2), flush=True)
        loss = {}
        for mode in modes:
            loss[mode.name] = await crash_run(mode, args.tables, args.crash_after)
            print(f"  crash {mode.name}: {loss[mode.name]}", flush=True)
        return {
            "tables": args.tables,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "store_commits": store_cost,
            "moves": cost,
            "crash": loss,
        }
    finally:
        for mode in modes:
            for close in mode.closers:
                with contextlib.suppress(Exception):
                    await close()
            mode.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.durability")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--tables", type=int, default=16, help="tables played at once")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of one slice")
    parser.add_argument("--rounds", type=int, default=12, help="slices per mode")
    parser.add_argument("--crash-after", type=float, default=4.0, help="seconds before SIGKILL")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    workdir = Path(tempfile.mkdtemp(prefix="glintwick-durability-"))
    try:
        report = asyncio.run(measure(args, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    strict = [report["crash"][m]["lost"] for m in ("always", "replica") if m in report["crash"]]
    return 1 if any(strict) else 0


if __name__ == "__main__":
    sys.exit(main())
