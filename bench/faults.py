"""`make faults`: games played through faults, then every game checked (docs/FAULTS.md).

Bot clients (the SDK, gRPC, the public API only) keep ``--games`` tables in play
through two ``glintwick serve`` processes (each client balances round-robin over
both), most by unary calls, some on Play sessions, with spectators watching some
games, while the campaign injects its fault steps one after another:

* ``kill-server``: SIGKILL of one server process (the clients fail over to the
  other), restarted on its port a few seconds later;
* ``kill-store``: SIGKILL of Redis, restarted from its data directory (AOF with
  ``appendfsync always``: no acknowledged write is lost);
* ``freeze-store``: Redis stopped (SIGSTOP) several seconds, then resumed;
* ``drop-clients``: for a few seconds the clients give up calls mid-flight
  (cancelled after a random few milliseconds) and close channels with calls in
  flight, and retry (each move with its request id);
* ``--topology cluster``: a Redis Cluster (loadtests/redis_cluster.py, three
  primaries with a replica each) and servers on ``--ack replica`` (a write is
  answered once its slot's replica has it), whose store faults differ
  (:meth:`Topology.store_steps`): ``primary-failover`` in place of ``kill-store``
  (SIGKILL of the primary with the most games in play until its replica is
  promoted, then the old node restarted: it rejoins as a replica), and two
  freezes of that primary, ``freeze-primary-short`` (shorter than the cluster's
  node timeout: nothing fails over) and ``freeze-primary`` (longer: its replica is
  promoted while it sleeps, and it rejoins as a replica once resumed).

Each client retries every refused call with the same request id (a move is applied
once however often it is sent) and records each move acknowledged (a success
answer).  Once the steps are done no new table starts and every table plays to
its end.  Then each game is checked against the store and the public API:

* its stored state equals the replay of its own action log (the seed from
  GetReplay, each logged action applied by the engine);
* the log holds exactly the moves the client had acknowledged: none missing (lost),
  none twice (a request id once), none the client never had answered;
* every watcher and every Play session, resumed however often, got every event
  after its first exactly once, in order;
* the game is over.

It prints the figures (games, moves, faults, client errors by code, moves lost,
recovery after each fault: from the fault until acknowledged moves are back to half
their rate before it) and exits non-zero on any loss or failed check.  `make faults`
runs both topologies, one after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import contextvars
import dataclasses
import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import grpc

from clients.bots.base import Bot
from clients.bots.registry import make_bot
from clients.sdk import (
    CORE_WRITE_FAILED,
    CallError,
    GlintwickClient,
    PlaySession,
    Prompt,
    RetryPolicy,
    Seat,
)
from clients.turn import wire_choice
from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from loadtests.redis_cluster import RedisCluster, redis_cluster
from loadtests.redis_process import RedisProcess, free_port
from services.codec import state_from_pb
from services.store.base import GameStore
from services.store.redis import SHARDS, RedisStore, index_key

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
# one contract of Whiskertrail (about 55 moves a game): many whole games in minutes
RULES = dataclasses.replace(WHISKERTRAIL, name="faults", contracts=WHISKERTRAIL.contracts[:1])
# codes a client retries (with the same request id): the service's, and a call the
# client itself dropped (CANCELLED) or gave up on (DEADLINE_EXCEEDED)
RETRIED = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}
# codes of a refusal that the table handles (a move the game moved past; a seat taken)
EXPECTED = {grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION}


# --------------------------------------------------------------------------- processes


class ServerProcess:
    """``glintwick serve`` on a fixed gRPC port, killed (SIGKILL) and restarted there."""

    def __init__(self, name: str, store_url: str, logs: Path, extra: Sequence[str] = ()) -> None:
        self.name = name
        self.port = free_port()
        self.store_url = store_url
        self.logs = logs
        self.extra = list(extra)
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        command = [sys.executable, "-m", "glintwick_cli", "serve", "--store", self.store_url,
                   "--grpc", self.address, "--http", "", "--log-format", "json", "--no-bots",
                   "--rate", "0", "--limits", "off", "--quotas", "off", *self.extra]  # fmt: skip
        self.starts += 1
        log = self.logs / f"{self.name}.{self.starts}.log"
        with log.open("wb") as sink:
            env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while b'"serving"' not in log.read_bytes():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}); see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not serve in {timeout} s; see {log}")
            time.sleep(0.1)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None


# --------------------------------------------------------------------------- topologies


class Topology(Protocol):
    """The Redis the servers use, and what the campaign does to it."""

    name: str
    #: what ``glintwick serve`` is given besides the store URL
    server_options: Sequence[str]

    @property
    def url(self) -> str:
        """The store URL the servers and the final checks use (a node that runs)."""
        ...

    def start(self) -> None: ...
    def stop(self) -> None: ...

    # the faults (each blocks until done; the answer: what it did, for the figures)
    def kill(self) -> str:
        """SIGKILL the store (its primary)."""
        ...

    def restart(self) -> str:
        """Start what :meth:`kill` killed, from its data directory."""
        ...

    def freeze(self) -> str: ...
    def thaw(self) -> str: ...
    def store_steps(self, seconds: float) -> list[Step]:
        """The topology's store faults, in order (``seconds``: how long a freeze lasts)."""
        ...


class Standalone:
    """One redis-server, AOF ``always`` by default: a SIGKILL loses no acknowledged write."""

    name = "standalone"
    server_options: Sequence[str] = ()

    def __init__(self, workdir: Path, persistence: str = "always") -> None:
        self.redis = RedisProcess(workdir, persistence)

    @property
    def url(self) -> str:
        return self.redis.url

    def start(self) -> None:
        self.redis.start()

    def stop(self) -> None:
        self.redis.stop()

    def kill(self) -> str:
        self.redis.kill()
        return ""

    def restart(self) -> str:
        self.redis.start(timeout=60)  # (an AOF to load first)
        return ""

    def freeze(self) -> str:
        self.redis.freeze()
        return ""

    def thaw(self) -> str:
        self.redis.thaw()
        return ""

    def store_steps(self, seconds: float) -> list[Step]:
        return [KillStore(), FreezeStore(seconds)]


class Cluster:
    """A Redis Cluster (loadtests/redis_cluster.py: three primaries with a replica each,
    no persistence: the replica is a primary's copy), the servers on ``--ack replica``
    (a write is answered once the replica of its slot's primary has it, so a failover
    loses no acknowledged move).  Its faults strike the primary with the most games in
    play (the ``active`` index of the shards it serves) at that moment."""

    name = "cluster"
    server_options: Sequence[str] = ("--ack", "replica")
    #: the cluster's node timeout: longer than the harness's 1 s for tests, so that a
    #: loaded machine's pauses fail nothing over unasked
    NODE_TIMEOUT_MS = 2000

    def __init__(self, workdir: Path) -> None:
        self._nodes = contextlib.ExitStack()
        self._cluster: RedisCluster | None = None
        self._down: int | None = None  # the port killed or frozen now
        self._since = 0.0  # when (monotonic)

    @property
    def cluster(self) -> RedisCluster:
        assert self._cluster is not None, "the cluster is not started"
        return self._cluster

    @property
    def url(self) -> str:
        up = [port for port in self.cluster.pids if port != self._down]
        return f"redis+cluster://127.0.0.1:{up[0]}"

    def start(self) -> None:
        self._cluster = self._nodes.enter_context(redis_cluster(self.NODE_TIMEOUT_MS))

    def stop(self) -> None:
        self._nodes.close()

    def busiest_primary(self) -> tuple[int, int]:
        """The primary serving the most games in play, and how many it serves."""
        games: collections.Counter[int] = collections.Counter()
        for shard in range(SHARDS):
            key = index_key(shard, "active")
            port = self.cluster.primary_of(key)
            with self.cluster.client(port) as client:
                games[port] += int(client.scard(key))
        return games.most_common(1)[0]

    def kill(self) -> str:
        port, games = self.busiest_primary()
        before = set(self.cluster.primaries())
        start = time.monotonic()
        self.cluster.kill_primary(port, timeout=90)  # (until its replica is promoted)
        self._down = port
        promoted = sorted(set(self.cluster.primaries()) - before)
        return (
            f"primary :{port} ({games} games in play) SIGKILLed; replica"
            f" :{','.join(map(str, promoted))} promoted in {time.monotonic() - start:.1f} s"
        )

    def restart(self) -> str:
        port, self._down = self._down, None
        assert port is not None, "nothing was killed"
        self.cluster.restart(port, timeout=90)  # (until it is a replica, linked)
        return f":{port} restarted, rejoined as a {self._role(port)}"

    def freeze(self) -> str:
        port, games = self.busiest_primary()
        self.cluster.freeze(port)
        self._down, self._since = port, time.monotonic()
        return f"primary :{port} ({games} games in play) SIGSTOPped"

    def thaw(self) -> str:
        port, self._down = self._down, None
        assert port is not None, "nothing was frozen"
        frozen = time.monotonic() - self._since
        self.cluster.thaw(port)
        self.cluster.wait_ok(90)  # (a primary failed over meanwhile: until it is a replica)
        return f"SIGCONT after {frozen:.1f} s: a {self._role(port)} now"

    def _role(self, port: int) -> str:
        role = self.cluster.roles().get(port, "unknown")
        return {"master": "primary", "slave": "replica"}.get(role, role)

    def store_steps(self, seconds: float) -> list[Step]:
        timeout = self.NODE_TIMEOUT_MS / 1000
        return [
            KillStore(name="primary-failover"),
            FreezeStore(timeout / 2, name="freeze-primary-short"),
            FreezeStore(max(seconds, timeout * 2.5), name="freeze-primary"),
        ]


TOPOLOGIES: dict[str, Callable[[Path], Topology]] = {"standalone": Standalone, "cluster": Cluster}


# --------------------------------------------------------------------------- the clients


@dataclass
class Figures:
    games: int = 0
    finished: int = 0
    moves: int = 0  # acknowledged
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    ack_times: list[float] = field(default_factory=list)  # monotonic, one per acked move
    faults: list[dict[str, Any]] = field(default_factory=list)
    watch_resumes: int = 0
    abandoned: int = 0  # tables left for a join refused SEAT_TAKEN (see new_game): 0
    play_resumes: int = 0

    samples: dict[str, str] = field(default_factory=dict)  # a message per reason
    # refusals no retry cured: how many of each call and code, and the first's
    # message and time (monotonic)
    fatal: collections.Counter[str] = field(default_factory=collections.Counter)
    first_fatal: dict[str, tuple[float, str]] = field(default_factory=dict)

    def refused(self, call: str, error: CallError) -> None:
        what = f"{call} {error.code.name}"
        self.fatal[what] += 1
        self.first_fatal.setdefault(what, (time.monotonic(), error.message[:160]))

    def error(self, code: str, message: str = "") -> None:
        self.errors[code] += 1
        if message:
            self.samples.setdefault(code, message[:160])


@dataclass
class Game:
    game_id: str
    tokens: list[str]
    by_play: bool
    acked: dict[int, str] = field(default_factory=dict)  # version → "seat:request id"
    acked_at: list[float] = field(default_factory=list)  # monotonic, one per acked move
    streams: list[list[tuple[int, int]]] = field(default_factory=list)  # (version, index)
    over: bool = False


class Clients:
    """The bot clients' channels (each balancing over both servers); ``dropping``: the
    drop-clients step is on (calls given up mid-flight, channels closed under calls)."""

    def __init__(self, targets: list[str], count: int) -> None:
        self.targets = targets
        self.pool = [self._new() for _ in range(count)]
        self.dropping = False
        #: the channels the drop step closed (with their calls in flight)
        self.closed: set[GlintwickClient] = set()

    def _new(self) -> GlintwickClient:
        # (no retry inside the SDK: the campaign retries and counts every refusal)
        return GlintwickClient(self.targets, retry=RetryPolicy(attempts=1, timeout=5.0))

    def of(self, index: int) -> GlintwickClient:
        """The slot's client now (remembered as this task's channel in use: see
        :func:`closed_under`)."""
        client = self.pool[index % len(self.pool)]
        _in_use.set(client)
        return client

    def closed_under(
        self, client: GlintwickClient | None, code: grpc.StatusCode, message: str
    ) -> bool:
        """Whether a call's failure is the drop step's own doing: ``INTERNAL`` "Internal
        error from Core" is what grpc-python's core answers a call on a channel closed
        with it in flight (grpc/grpc#34148), as ``CANCELLED`` or a UsageError are; only
        on a channel this campaign closed (a server's INTERNAL is never retried)."""
        return (
            code is grpc.StatusCode.INTERNAL
            and message.startswith(CORE_INTERNAL)
            and client is not None
            and client in self.closed
        )

    async def replace(self, index: int) -> None:
        """Close a channel with its calls in flight (they end CANCELLED) for a new one."""
        old = self.pool[index]
        self.pool[index] = self._new()
        self.closed.add(old)
        await old.close()

    async def close(self) -> None:
        for client in self.pool:
            await client.close()


class SessionEnded(Exception):
    """A Play act's session (or its stream) is over: the act is settled by SubmitAction."""


def _name(call: Callable[..., object]) -> str:
    """A call's name (of a partial: its function's), for the figures."""
    while isinstance(call, functools.partial):
        call = call.func
    return getattr(call, "__name__", repr(call))


#: the message of grpc-python's own INTERNAL on a call its channel's closing failed
CORE_INTERNAL = CORE_WRITE_FAILED
#: the client of this task's latest call (Clients.of): the channel a failure was on
_in_use: contextvars.ContextVar[GlintwickClient | None] = contextvars.ContextVar(
    "in_use", default=None
)


def _dropped_by_us() -> bool:
    """A CancelledError that is no cancel of this task: its channel was closed under it."""
    task = asyncio.current_task()
    return task is not None and not task.cancelling()


def _channel_closed() -> CallError:
    return CallError(grpc.StatusCode.CANCELLED, "CHANNEL_CLOSED", "closed mid-call")


async def _cancelled_as_error(clients: Clients, call: Callable[[], Awaitable[T]]) -> T:
    _in_use.set(None)
    try:
        return await call()
    except (asyncio.CancelledError, grpc.aio.UsageError):
        if not _dropped_by_us():
            raise
        raise _channel_closed() from None
    except CallError as exc:
        if clients.closed_under(_in_use.get(), exc.code, exc.message):
            raise _channel_closed() from exc
        raise


class Campaign:
    def __init__(self, clients: Clients, figures: Figures, seed: int) -> None:
        self.clients = clients
        self.figures = figures
        self.rng = random.Random(seed)
        self.games: list[Game] = []
        self.stopping = False  # no new table starts
        self.think = 0.2  # seconds between a table's moves (paces the load)

    async def retrying(self, call: Callable[[], Awaitable[T]], patience: float = 120.0) -> T:
        """``call()`` until it answers (a refusal with a retried code is counted)."""
        deadline = time.monotonic() + patience
        delay = 0.05
        while True:
            try:
                return await _cancelled_as_error(self.clients, call)
            except CallError as exc:
                reason = exc.reason if exc.code in RETRIED else exc.code.name
                self.figures.error(reason, exc.message)
                if exc.code not in RETRIED or time.monotonic() > deadline:
                    if exc.code not in EXPECTED:
                        self.figures.refused(_name(call), exc)
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _dropped(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, given up after a few milliseconds while the drop step is on."""
        if not self.clients.dropping or self.rng.random() < 0.5:
            return await call()
        try:
            async with asyncio.timeout(self.rng.uniform(0.0005, 0.02)):
                return await call()
        except TimeoutError:
            raise CallError(grpc.StatusCode.CANCELLED, "DROPPED", "given up mid-call") from None

    async def new_game(self, index: int, by_play: bool) -> Game:
        """A two-seat table with both seats joined.  Each join is retried with its own
        request id: a join that landed but whose answer was lost is answered again with
        its seat (and a new token).  (A SEAT_TAKEN all the same would leave the table,
        counted as abandoned, and make another: none is expected.)"""
        while True:
            game = await self.retrying(functools.partial(self._create, index))
            tokens: list[str] = []
            try:
                for seat in range(2):
                    request_id = uuid.uuid4().hex
                    join = functools.partial(self._join, index, game.game_id, seat, request_id)
                    tokens.append(await self.retrying(join))
            except CallError as exc:
                if exc.reason != "SEAT_TAKEN":
                    raise
                self.figures.abandoned += 1
                continue
            played = Game(game.game_id, tokens, by_play)
            self.games.append(played)
            self.figures.games += 1
            return played

    async def _create(self, index: int) -> pb.Game:
        # (the slot's client at each try: the drop step replaces closed ones)
        client = self.clients.of(index)
        return await client.create_game(convert.rules_to_pb(RULES), seats=2, seed=uuid.uuid4().hex)

    async def _join(self, index: int, game_id: str, seat: int, request_id: str) -> str:
        client = self.clients.of(index)
        return (await client.join(game_id, seat=seat, request_id=request_id)).token

    def seat(self, index: int, game: Game, seat: int) -> Seat:
        return self.clients.of(index).seat(game.game_id, seat, game.tokens[seat])

    async def table(self, index: int) -> None:
        """Tables one after another at slot ``index`` until the campaign stops them."""
        while not self.stopping:
            by_play = index % 10 == 0
            game = await self.new_game(index, by_play)
            watched = index % 10 == 5
            watch = asyncio.create_task(self.watch(index, game)) if watched else None
            if by_play:
                await self.play_by_session(index, game)
            else:
                await self.play_unary(index, game)
            if watch is not None:
                await watch
            self.figures.finished += 1

    def acked(self, game: Game, seat: int, version: int, request_id: str) -> None:
        game.acked[version] = f"{seat}:{request_id}"
        self.figures.moves += 1
        now = time.monotonic()
        self.figures.ack_times.append(now)
        game.acked_at.append(now)

    def bots(self) -> list[Bot]:
        """A greedy bot per seat, told the rules (a custom rule set: no preset by name)."""
        bots = [make_bot("greedy", seed=self.rng.randrange(1 << 30)) for _ in range(2)]
        for seat, bot in enumerate(bots):
            bot.setup(RULES, seat)
        return bots

    async def _view(self, index: int, game: Game, seat: int) -> pb.View:
        return await self.seat(index, game, seat).view()

    async def _legal(self, index: int, game: Game, seat: int) -> list[pb.Action]:
        return await self.seat(index, game, seat).legal_actions()

    async def _act(
        self, index: int, game: Game, seat: int, action: pb.Action, version: int, request_id: str
    ) -> pb.SubmitActionResponse:
        act = self.seat(index, game, seat).act
        return await self._dropped(
            functools.partial(act, action, expected_version=version, request_id=request_id)
        )

    async def play_unary(self, index: int, game: Game) -> None:
        bots = self.bots()
        rng = random.Random(self.rng.random())
        to_act = 0
        while True:
            view = await self.retrying(functools.partial(self._view, index, game, to_act))
            if view.game_over:
                game.over = True
                return
            if not view.may_act:
                to_act = view.to_act[0] if view.to_act else to_act
                continue
            legal = await self.retrying(functools.partial(self._legal, index, game, to_act))
            if not legal:
                continue
            action = wire_choice(bots[to_act], view, legal, rng)
            await asyncio.sleep(self.think * rng.random() * 2)
            request_id = uuid.uuid4().hex
            act = functools.partial(
                self._act, index, game, to_act, action, view.version, request_id
            )
            try:
                answer = await self.retrying(act)
            except CallError as exc:
                if exc.code is not grpc.StatusCode.ABORTED:
                    raise
                continue  # (the game moved on: read it again)
            self.acked(game, to_act, answer.version, request_id)

    async def _session_act(
        self, session: PlaySession, prompt: Prompt, action: pb.Action, request_id: str
    ) -> int:
        """One try of a Play act; SessionEnded when nothing can carry it any more (its
        seat's session or the stream over: a retry on it would never be answered)."""
        if session.ended or not session.is_open(prompt.seat):
            raise SessionEnded
        _in_use.set(session.client)
        return await self._dropped(functools.partial(prompt.act, action, request_id=request_id))

    async def settle(
        self, index: int, game: Game, seat: int, action: pb.Action, version: int, request_id: str
    ) -> None:
        """A Play act whose answer its session did not give, sent again by SubmitAction
        with its request id: a move that landed is answered (acknowledged), one that
        did not is applied now, or ABORTED if the game moved past it."""
        resend = functools.partial(self._act, index, game, seat, action, version, request_id)
        try:
            answer = await self.retrying(resend)
        except CallError as exc:
            if exc.code is not grpc.StatusCode.ABORTED:
                raise
            return
        self.acked(game, seat, answer.version, request_id)

    async def play_by_session(self, index: int, game: Game) -> None:
        """Both seats on one Play session, reopened after the last event each seat got
        whenever it ends with a seat's session not over (its events: ``game.streams``)."""
        bots = self.bots()
        rng = random.Random(self.rng.random())
        events: list[list[tuple[int, int]]] = [[], []]
        game.streams.extend(events)
        cursors = ["", ""]
        # an act whose answer the session did not give (seat, action, version, request
        # id): sent again with its request id before the session reopens, so that a
        # move that landed is known as acknowledged
        # (and before the table ends: the act whose move ended the game may be one,
        # its session over before a retry could be sent on it)
        unsettled: tuple[int, pb.Action, int, str] | None = None
        while True:
            if unsettled is not None:
                await self.settle(index, game, *unsettled)
                unsettled = None
            client = self.clients.of(index)
            seats = [client.seat(game.game_id, s, game.tokens[s]) for s in range(2)]

            def seen(seat: Seat, event: pb.Event) -> None:
                events[seat.seat].append((event.version, event.index))
                cursors[seat.seat] = event.cursor

            session = client.play_session(on_event=seen)
            try:
                for seat in seats:
                    session.add(seat, after_cursor=cursors[seat.seat])
                async for prompt in session:
                    action = wire_choice(
                        bots[prompt.seat.seat], prompt.view, prompt.legal_actions, rng
                    )
                    await asyncio.sleep(self.think * rng.random() * 2)
                    request_id = uuid.uuid4().hex
                    act = functools.partial(self._session_act, session, prompt, action, request_id)
                    try:
                        version = await self.retrying(act, patience=10)
                    except (CallError, SessionEnded) as exc:
                        if isinstance(exc, CallError) and exc.code is grpc.StatusCode.ABORTED:
                            continue  # a fresh prompt follows
                        # the session is gone: settle the act, then reopen it
                        unsettled = (prompt.seat.seat, action, prompt.version, request_id)
                        break
                    self.acked(game, prompt.seat.seat, version, request_id)
                over = all(session.final_view(s) is not None for s in seats)
                for error in session.errors.values():
                    self.figures.error(error.reason)
            except CallError as exc:
                if self.clients.closed_under(client, exc.code, exc.message):
                    exc = _channel_closed()
                self.figures.error(exc.reason if exc.code in RETRIED else exc.code.name)
                over = False
            except grpc.aio.UsageError:  # (its channel closed under it: the drop step)
                self.figures.error("CHANNEL_CLOSED")
                over = False
            finally:
                await session.close()
            if over:
                if unsettled is not None:
                    await self.settle(index, game, *unsettled)
                game.over = True
                return
            self.figures.play_resumes += 1
            await asyncio.sleep(0.2)

    async def watch(self, index: int, game: Game) -> None:
        """A spectator, resuming after the last event it got until the game's end."""
        received: list[tuple[int, int]] = []
        game.streams.append(received)
        cursor = ""
        while True:
            request = pb.WatchGameRequest(game_id=game.game_id, after_cursor=cursor)
            client = self.clients.of(index)
            stream = client.stub.WatchGame(request, timeout=300)
            try:
                async for item in stream:
                    if item.HasField("event"):
                        received.append((item.event.version, item.event.index))
                        cursor = item.event.cursor
                        if item.event.type == "game_ended":
                            return
                return
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.CancelledError) as exc:
                if isinstance(exc, asyncio.CancelledError) and not _dropped_by_us():
                    raise
                code = "CHANNEL_CLOSED"
                if isinstance(exc, grpc.aio.AioRpcError) and not self.clients.closed_under(
                    client, exc.code(), exc.details() or ""
                ):
                    code = exc.code().name
                self.figures.error(code)
                self.figures.watch_resumes += 1
                await asyncio.sleep(0.2)
            finally:
                stream.cancel()


# --------------------------------------------------------------------------- fault steps


@dataclass
class Context:
    topology: Topology
    servers: list[ServerProcess]
    clients: Clients
    figures: Figures


class Step(Protocol):
    name: str

    async def inject(self, context: Context) -> str:
        """Do the fault and repair it (restart, resume): the campaign then measures.
        The answer: what it did ("" when its name says it)."""
        ...


@dataclass
class KillServer:
    index: int
    down: float = 3.0
    name: str = "kill-server"

    async def inject(self, context: Context) -> str:
        server = context.servers[self.index]
        server.kill()
        await asyncio.sleep(self.down)
        server.store_url = context.topology.url  # (a cluster's node that runs now)
        await asyncio.to_thread(server.start)
        return f"server {self.index}"


@dataclass
class KillStore:
    name: str = "kill-store"

    async def inject(self, context: Context) -> str:
        killed = await asyncio.to_thread(context.topology.kill)
        await asyncio.sleep(1.0)
        restarted = await asyncio.to_thread(context.topology.restart)
        return "; ".join(filter(None, [killed, restarted]))


@dataclass
class FreezeStore:
    seconds: float = 5.0
    name: str = "freeze-store"

    async def inject(self, context: Context) -> str:
        frozen = await asyncio.to_thread(context.topology.freeze)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            resumed = await asyncio.to_thread(context.topology.thaw)
        return "; ".join(filter(None, [frozen, resumed]))


@dataclass
class DropClients:
    seconds: float = 5.0
    name: str = "drop-clients"

    async def inject(self, context: Context) -> str:
        clients = context.clients
        clients.dropping = True
        try:
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                await asyncio.sleep(0.5)
                await clients.replace(random.randrange(len(clients.pool)))
        finally:
            clients.dropping = False
        return ""


def steps_for(topology: Topology, seconds: float = 5.0) -> list[Step]:
    """The campaign's faults in order; ``seconds``: how long Redis stays frozen and the
    clients drop calls (a killed server stays down for most of it)."""
    return [
        KillServer(0, down=seconds * 0.6),
        *topology.store_steps(seconds),
        DropClients(seconds),
        KillServer(1, down=seconds * 0.6),
    ]


def recovery_seconds(acks: Sequence[float], start: float, until: float) -> float | None:
    """From ``start`` to the first acknowledged move of the first second (windows 0.1 s
    apart) whose moves are back to half their rate in the 5 s before ``start`` (None:
    not within ``until``)."""
    before = sum(1 for t in acks if start - 5 <= t < start) / 5
    if before == 0:
        return None
    at = start
    while at + 1 <= until:
        window = [t for t in acks if at <= t < at + 1]
        if window and len(window) >= before / 2:
            return round(min(window) - start, 2)
        at += 0.1
    return None


def worst_stall(games: Sequence[Game], start: float) -> tuple[float, str] | None:
    """The longest a game in play at ``start`` waited, from its last acknowledged move
    before ``start`` to its next (a fault that strikes some games only, a cluster's
    primary, hardly moves the rate that :func:`recovery_seconds` follows), and that
    game (its id, "play" if on a Play session: to find it in the servers' logs)."""
    waits = []
    for game in games:
        before = [t for t in game.acked_at if t < start]
        after = [t for t in game.acked_at if t >= start]
        if before and after:
            waits.append((after[0] - before[-1], game.game_id + (" play" if game.by_play else "")))
    if not waits:
        return None
    wait, game_id = max(waits)
    return round(wait, 2), game_id


def server_log_errors(logs: Path) -> collections.Counter[str]:
    """The servers' log lines at level error or above, by event (a fault must not
    make a server log a bug: tracebacks, a failed log reader)."""
    found: collections.Counter[str] = collections.Counter()
    for log in sorted(logs.glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict) and entry.get("level") in ("error", "critical"):
                    found[str(entry.get("event"))] += 1
    return found


# --------------------------------------------------------------------------- the checks


@dataclass
class Verdict:
    lost: int = 0  # acknowledged moves missing from the log
    duplicated: int = 0  # a request id applied twice
    unacknowledged: int = 0  # logged moves the client never had answered
    state_mismatches: int = 0
    unfinished: int = 0
    stream_faults: int = 0  # a watcher or play session that missed or repeated an event
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicated
            or self.unacknowledged
            or self.state_mismatches
            or self.unfinished
            or self.stream_faults
        )


def check_stream(received: list[tuple[int, int]], expected: list[tuple[int, int]]) -> bool:
    """Every event after the first received, exactly once and in order."""
    # (a stream opened at version 0 gets round 1's deal first: version 0, in no log entry)
    received = [r for r in received if r[0] > 0] if received and received[0][0] == 0 else received
    if not received or received[0] not in expected:
        return False
    start = expected.index(received[0])
    return received == expected[start:]


async def check_game(
    store: GameStore, client: GlintwickClient, game: Game, verdict: Verdict
) -> None:
    snapshot = await store.load(game.game_id)
    if snapshot is None:
        verdict.lost += len(game.acked)
        verdict.problems.append(f"{game.game_id}: no record")
        return
    record = spb.StoredGame.FromString(snapshot.record)
    entries: list[spb.LogEntry] = []
    while True:
        items = await store.read_log(game.game_id, len(entries))
        if not items:
            break
        entries += [spb.LogEntry.FromString(i.entry) for i in items]
    if [e.version for e in entries] != list(range(1, len(entries) + 1)):
        verdict.state_mismatches += 1
        verdict.problems.append(f"{game.game_id}: the log's versions have a gap")
    logged = collections.Counter(e.request_id for e in entries)
    verdict.duplicated += sum(n - 1 for n in logged.values() if n > 1)
    by_version = {e.version: e.request_id for e in entries}
    for version, request_id in game.acked.items():
        if by_version.get(version) != request_id:
            verdict.lost += 1
            verdict.problems.append(f"{game.game_id}: acknowledged v{version} is not logged")
    for version, request_id in by_version.items():
        if version not in game.acked:
            verdict.unacknowledged += 1
            verdict.problems.append(
                f"{game.game_id}: v{version} ({request_id}) is logged, never acknowledged"
            )
    state = state_from_pb(record.state)
    if not (game.over and state.is_terminal()):
        verdict.unfinished += 1
        verdict.problems.append(f"{game.game_id}: not over")
        return
    replay = await client.replay(game.game_id)
    rules = convert.rules_from_pb(replay.game.rule_set)
    orders = {d.round: list(d.cards) for d in replay.decks}
    replayed = GameState.new_game(
        rules, replay.game.seats, convert.seed_from_hex(replay.seed), stock_orders=orders or None
    )
    events: list[tuple[int, int]] = []
    for entry in entries:
        replayed, produced = replayed.apply_action(entry.seat, convert.action_from_pb(entry.action))
        events += [(entry.version, i) for i in range(len(produced))]
    if replayed != state:
        verdict.state_mismatches += 1
        verdict.problems.append(f"{game.game_id}: the stored state is not its log's replay")
    for received in game.streams:
        if not check_stream(received, events):
            verdict.stream_faults += 1
            verdict.problems.append(
                f"{game.game_id}: a stream got {received[:3]}… of {events[:3]}…"
            )


# --------------------------------------------------------------------------- the run


async def campaign(args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], bool]:
    topology = TOPOLOGIES[args.topology](workdir / "redis")
    topology.start()
    logs = workdir / "logs"
    logs.mkdir()
    servers = [
        ServerProcess(f"server{i}", topology.url, logs, topology.server_options) for i in range(2)
    ]
    figures = Figures()
    clients: Clients | None = None
    try:
        for server in servers:
            await asyncio.to_thread(server.start)
        clients = Clients([s.address for s in servers], max(2, args.games // 20))
        play = Campaign(clients, figures, args.seed)
        play.think = args.think  # (each pause uniform in 0..2× this)
        context = Context(topology, servers, clients, figures)
        started = time.monotonic()
        tables = [asyncio.create_task(play.table(i)) for i in range(args.games)]
        await asyncio.sleep(args.warmup)
        for step in steps_for(topology, args.fault_seconds):
            at = time.monotonic()
            detail = await step.inject(context)
            repaired = time.monotonic()
            await asyncio.sleep(args.settle)
            figures.faults.append(
                {
                    "fault": step.name,
                    "at_s": round(at - started, 1),
                    "lasted_s": round(repaired - at, 1),
                    "detail": detail,
                    "start": at,
                }
            )
            print(f"  {step.name} at {at - started:.0f} s: {detail}", flush=True)
        play.stopping = True
        play.think = 0.0
        done, pending = await asyncio.wait(tables, timeout=args.finish)
        failures = [
            "cancelled" if t.cancelled() else repr(t.exception())
            for t in done
            if t.cancelled() or t.exception() is not None
        ]
        for task in pending:
            task.cancel()
        for fault in figures.faults:
            start = fault.pop("start")
            fault["recovery_s"] = recovery_seconds(figures.ack_times, start, time.monotonic())
            stall = worst_stall(play.games, start)
            fault["worst_stall_s"] = stall[0] if stall else None
            fault["worst_stall_game"] = stall[1] if stall else None
        elapsed = time.monotonic() - started
        verdict = Verdict()
        verdict.problems += [f"a table failed: {f}" for f in failures]
        if figures.abandoned:  # (a join retried with its request id is never SEAT_TAKEN)
            verdict.problems.append(f"{figures.abandoned} tables abandoned at join")
        store = RedisStore(topology.url)
        try:
            checker = clients.of(0)
            for game in play.games:
                with contextlib.suppress(asyncio.CancelledError):
                    await check_game(store, checker, game, verdict)
        finally:
            await store.close()
        unexpected = {c: n for c, n in figures.errors.items() if c in ("INTERNAL", "UNKNOWN")}
        ok = verdict.ok and not failures and not pending and not unexpected
        ok = ok and not figures.abandoned
        report = {
            "topology": topology.name,
            "games": figures.games,
            "games_finished": figures.finished,
            "concurrent_tables": args.games,
            "moves_acknowledged": figures.moves,
            "seconds": round(elapsed, 1),
            "moves_per_second": round(figures.moves / elapsed, 1),
            "faults": figures.faults,
            "client_errors_by_reason": dict(figures.errors.most_common()),
            "client_error_samples": figures.samples,
            "tables_abandoned_at_join": figures.abandoned,
            "watch_resumes": figures.watch_resumes,
            "play_session_reopens": figures.play_resumes,
            "streams_checked": sum(len(g.streams) for g in play.games),
            "moves_lost": verdict.lost,
            "applied_twice": verdict.duplicated,
            "applied_unacknowledged": verdict.unacknowledged,
            "state_mismatches": verdict.state_mismatches,
            "unfinished": verdict.unfinished + len(pending),
            "stream_faults": verdict.stream_faults,
            "server_log_errors": dict(server_log_errors(logs)),
            "refusals_not_retried": {
                what: f"{n}, the first at {figures.first_fatal[what][0] - started:.1f} s:"
                f" {figures.first_fatal[what][1]}"
                for what, n in figures.fatal.most_common()
            },
            "problems": verdict.problems[:20],
            "ok": ok,
        }
        return report, ok
    finally:
        if clients is not None:
            await clients.close()
        for server in servers:
            server.stop()
        topology.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.faults", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--games", type=int, default=200, help="tables in play at once")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before the first fault")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after each fault")
    parser.add_argument("--finish", type=float, default=180.0, help="seconds for every game to end")
    parser.add_argument(
        "--fault-seconds", type=float, default=5.0, help="how long Redis stays frozen, etc."
    )
    parser.add_argument("--topology", choices=sorted(TOPOLOGIES), default="standalone")
    parser.add_argument("--think", type=float, default=0.25, help="mean seconds between moves")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    args = parser.parse_args(argv)
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    workdir = Path(tempfile.mkdtemp(prefix="glintwick-faults-"))
    ok = False
    try:
        report, ok = asyncio.run(campaign(args, workdir))
    finally:
        if ok and not args.keep_logs:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept the servers' logs: {workdir}/logs", flush=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    print("faults: OK" if ok else "faults: FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
