"""Glintwick under load: tables in play, the solver, watchers, and the HTTP/JSON face.

    locust -f loadtests/locustfile.py --host 127.0.0.1:50051 --http-host http://127.0.0.1:8080

User classes (docs/LOADTEST.md):

* ``TableUser`` — one table over gRPC: creates a game, joins every seat and plays it
  to the end with the ``greedy`` bot's decisions, thinking ``--think-time`` seconds
  (on average) before each move; then the next game.  ``--tables`` of them are the
  concurrent tables.
* ``PlayTableUser`` — the same table over gRPC on one Play stream (``--play-tables``):
  the server pushes each seat's prompt and a move is one act on the stream; its
  samples are ``Play (act)`` (act to result, the counterpart of ``SubmitAction``).
* ``HttpTableUser`` — the same over the HTTP/JSON face (``--http-host``).
* ``SolverUser`` — ``AnalyseHand`` with hands drawn from the corpus (the conformance
  hands and generated deals; ``--best-only-share`` of them the fast path).
* ``WatcherUser`` — holds ``WatchGame`` streams open (``--watch-seconds`` each) on the
  games this process's table users are playing; an event's sample is the time from
  its move's submission to its arrival.

The counts (``--tables``, ``--play-tables``, ``--http-tables``, ``--solvers``,
``--watchers``) fix how many of each run and their sum is the user count;
``--weights TableUser=4,SolverUser=1,…`` switches to locust's weighted mix instead
(then ``-u`` is the total).  Every option has a ``LOCUST_*`` environment variable.
``--max-p99-ms`` makes the run fail (exit code 3) when a p99 is over its limit; any
failed request fails it too (exit code 1).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import random
import sys
from pathlib import Path
from typing import Any

import grpc
from locust import events, task
from locust.argument_parser import LocustArgumentParser
from locust.contrib.fasthttp import FastHttpUser
from locust.env import Environment
from locust.runners import WorkerRunner
from locust.user.users import User

# locust puts this file's folder on sys.path; the package imports need the repository's
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.corpus import Hand, corpus
from loadtests.grpc_user import GrpcUser, reserve_grpc_worker, simulated_client_address
from loadtests.play import (
    GAMES,
    FaceError,
    GrpcFace,
    HttpFace,
    parse_kinds,
    play_table,
    play_table_stream,
    stream_event_version,
)

log = logging.getLogger("glintwick.loadtest")

DEFAULT_KINDS = "contract:4,whiskertrail:2,whiskertrail:3,whiskertrail:4"


def add_options(parser: LocustArgumentParser) -> None:
    group = parser.add_argument_group("Glintwick", "the load's shape (docs/LOADTEST.md)")
    add = group.add_argument
    add("--tables", type=int, default=10, env_var="LOCUST_TABLES", help="gRPC tables in play")
    add(
        "--play-tables",
        type=int,
        default=0,
        env_var="LOCUST_PLAY_TABLES",
        help="gRPC tables in play on Play streams (one per table)",
    )
    add(
        "--http-tables",
        type=int,
        default=1,
        env_var="LOCUST_HTTP_TABLES",
        help="tables played over the HTTP/JSON face",
    )
    add(
        "--solvers", type=int, default=2, env_var="LOCUST_SOLVERS", help="users calling AnalyseHand"
    )
    add(
        "--watchers",
        type=int,
        default=5,
        env_var="LOCUST_WATCHERS",
        help="users holding watch streams on games in play",
    )
    add(
        "--weights",
        default="",
        env_var="LOCUST_WEIGHTS",
        help="weights instead of counts, e.g. TableUser=4,SolverUser=1 (then -u is the total)",
    )
    add(
        "--http-host",
        default="http://127.0.0.1:8080",
        env_var="LOCUST_HTTP_HOST",
        help="base URL of the HTTP/JSON face (--host is the gRPC target host:port)",
    )
    add(
        "--table-kinds",
        default=DEFAULT_KINDS,
        env_var="LOCUST_TABLE_KINDS",
        help="rule set:seats of the tables, picked at random per game",
    )
    add("--bot", default="greedy", env_var="LOCUST_BOT", help="the bot whose decisions are played")
    add(
        "--think-time",
        type=float,
        default=0.5,
        env_var="LOCUST_THINK_TIME",
        help="mean seconds a table thinks before each move (uniform 0.5x..1.5x)",
    )
    add(
        "--solver-wait",
        type=float,
        default=0.2,
        env_var="LOCUST_SOLVER_WAIT",
        help="mean seconds between a solver user's calls",
    )
    add(
        "--best-only-share",
        type=float,
        default=0.5,
        env_var="LOCUST_BEST_ONLY_SHARE",
        help="share of AnalyseHand calls on the best_only fast path",
    )
    add(
        "--corpus-generated",
        type=int,
        default=500,
        env_var="LOCUST_CORPUS_GENERATED",
        help="generated hands added to the conformance hands",
    )
    add("--corpus-seed", type=int, default=0, env_var="LOCUST_CORPUS_SEED")
    add(
        "--watch-seconds",
        type=float,
        default=30.0,
        env_var="LOCUST_WATCH_SECONDS",
        help="how long a watcher holds one stream (its deadline)",
    )
    add(
        "--deadline",
        type=float,
        default=10.0,
        env_var="LOCUST_DEADLINE",
        help="seconds: the deadline of every call (HTTP: the network timeout)",
    )
    add(
        "--max-p99-ms",
        default="",
        env_var="LOCUST_MAX_P99_MS",
        help="fail the run when a p99 is over its limit: '100' or 'SubmitAction=100,*=250'",
    )


def option(environment: Environment, name: str, default: Any) -> Any:
    options = environment.parsed_options
    return getattr(options, name, default) if options is not None else default


_seeds = itertools.count(1)


def _jitter(mean: float, rng: random.Random) -> float:
    return mean * rng.uniform(0.5, 1.5) if mean > 0 else 0.0


# --------------------------------------------------------------------------- users


class TableUser(GrpcUser):
    """One table over gRPC, played to the end again and again."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment, float(option(environment, "deadline", 10.0)))
        self.rng = random.Random(next(_seeds))
        self.kinds = parse_kinds(str(option(environment, "table_kinds", DEFAULT_KINDS)))
        self.think = float(option(environment, "think_time", 0.5))
        self.bot = str(option(environment, "bot", "greedy"))
        self.face = GrpcFace(self.stub, float(option(environment, "deadline", 10.0)))

    def wait_time(self) -> float:
        return _jitter(self.think, self.rng)

    @task
    def play(self) -> None:
        rule_set, seats = self.rng.choice(self.kinds)
        # a refused call has been reported (by the interceptor); then the next table
        with contextlib.suppress(FaceError):
            play_table(
                self.face,
                rule_set,
                seats,
                bot=self.bot,
                rng=self.rng,
                think=self.wait,
                name="lt",
                report=self.report,
            )


class PlayTableUser(GrpcUser):
    """One table over gRPC on one Play stream, played to the end again and again."""

    def __init__(self, environment: Environment) -> None:
        self.deadline = float(option(environment, "deadline", 10.0))
        super().__init__(environment, self.deadline)
        self.rng = random.Random(next(_seeds))
        self.kinds = parse_kinds(str(option(environment, "table_kinds", DEFAULT_KINDS)))
        self.think = float(option(environment, "think_time", 0.5))
        self.bot = str(option(environment, "bot", "greedy"))
        self.face = GrpcFace(self.stub, self.deadline)
        # the stream is reported by hand (the interceptor sees unary and server streams)
        self.streams = pb_grpc.GameServiceStub(self._channel)
        # a bidirectional stream waits in two places at once (its next message, and
        # grpc's thread sending the acts): a second worker of the hub's threadpool
        reserve_grpc_worker()

    def wait_time(self) -> float:
        return _jitter(self.think, self.rng)

    @task
    def play(self) -> None:
        rule_set, seats = self.rng.choice(self.kinds)
        with contextlib.suppress(FaceError):  # reported; then the next table
            play_table_stream(
                self.face,
                self.streams,
                rule_set,
                seats,
                bot=self.bot,
                rng=self.rng,
                think=self.wait,
                report=self.report,
                deadline=self.deadline,
                name="lt",
            )


class HttpTableUser(FastHttpUser):
    """One table over the HTTP/JSON face."""

    def __init__(self, environment: Environment) -> None:
        deadline = float(option(environment, "deadline", 10.0))
        # --host is the gRPC target; this user talks to --http-host
        self.host = str(option(environment, "http_host", "http://127.0.0.1:8080"))
        self.network_timeout = deadline
        self.connection_timeout = deadline
        self.default_headers = {"X-Forwarded-For": simulated_client_address()}
        super().__init__(environment)
        self.rng = random.Random(next(_seeds))
        self.kinds = parse_kinds(str(option(environment, "table_kinds", DEFAULT_KINDS)))
        self.think = float(option(environment, "think_time", 0.5))
        self.bot = str(option(environment, "bot", "greedy"))
        self.face = HttpFace(self.client, deadline)

    def wait_time(self) -> float:
        return _jitter(self.think, self.rng)

    @task
    def play(self) -> None:
        rule_set, seats = self.rng.choice(self.kinds)
        # a refused call has been reported (as its request's failure); then the next table
        with contextlib.suppress(FaceError):
            play_table(
                self.face, rule_set, seats, bot=self.bot, rng=self.rng, think=self.wait, name="lt"
            )


_CORPUS: list[Hand] = []


def _corpus(environment: Environment) -> list[Hand]:
    if not _CORPUS:
        generated = int(option(environment, "corpus_generated", 500))
        _CORPUS.extend(corpus(generated, int(option(environment, "corpus_seed", 0))))
    return _CORPUS


class SolverUser(GrpcUser):
    """AnalyseHand with hands from the corpus: the hot solver path."""

    def __init__(self, environment: Environment) -> None:
        self.deadline = float(option(environment, "deadline", 10.0))
        super().__init__(environment, self.deadline)
        self.rng = random.Random(next(_seeds))
        self.hands = _corpus(environment)
        self.pause = float(option(environment, "solver_wait", 0.2))
        self.best_only_share = float(option(environment, "best_only_share", 0.5))

    def wait_time(self) -> float:
        return _jitter(self.pause, self.rng)

    @task
    def analyse(self) -> None:
        hand = self.rng.choice(self.hands)
        request = pb.AnalyseHandRequest(
            rule_set_name=hand.rule_set,
            round=hand.round,
            hand=hand.cards,
            best_only=self.rng.random() < self.best_only_share,
        )
        with contextlib.suppress(grpc.RpcError):  # a failure is reported by the interceptor
            self.stub.AnalyseHand(request, timeout=self.deadline)


class WatcherUser(GrpcUser):
    """Spectator watch streams on games in play, each held for ``--watch-seconds``."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment, float(option(environment, "deadline", 10.0)))
        self.rng = random.Random(next(_seeds))
        self.hold = float(option(environment, "watch_seconds", 30.0))
        self.watching: str | None = None

    def wait_time(self) -> float:
        return 0.1 if len(GAMES) else 0.5  # no game in play yet: look again soon

    def message_latency(self, rpc: str, message: Any) -> float | None:
        version = stream_event_version(message)
        if version is None or self.watching is None:
            return None
        return GAMES.since_submitted_ms(self.watching, version)

    @task
    def watch(self) -> None:
        game_id = GAMES.pick(self.rng)
        if game_id is None:
            return
        self.watching = game_id
        stream = self.stub.WatchGame(pb.WatchGameRequest(game_id=game_id), timeout=self.hold)
        try:
            for _ in stream:
                pass
        except grpc.RpcError:
            pass  # held until its deadline, or broken (reported by the interceptor)
        finally:
            stream.cancel()
            self.watching = None


# --------------------------------------------------------------------------- the mix

COUNT_OPTIONS: dict[type[User], str] = {
    TableUser: "tables",
    PlayTableUser: "play_tables",
    HttpTableUser: "http_tables",
    SolverUser: "solvers",
    WatcherUser: "watchers",
}


def parse_limits(text: str) -> dict[str, float]:
    """``"100"`` → {"*": 100}; ``"SubmitAction=100,*=250"`` → both."""
    limits: dict[str, float] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.rpartition("=")
        limits[name.strip() if sep else "*"] = float(value)
    return limits


def parse_weights(text: str) -> dict[str, int]:
    weights: dict[str, int] = {}
    for part in text.split(","):
        if part.strip():
            name, _, value = part.partition("=")
            weights[name.strip()] = int(value)
    return weights


def configure_mix(environment: Environment, **_: Any) -> None:
    """Counts (or weights) per user class; the master (or the only process) decides."""
    options = environment.parsed_options
    if options is None or isinstance(environment.runner, WorkerRunner):
        return
    chosen = set(environment.user_classes)  # the classes named on the command line, or all
    weights = parse_weights(str(options.weights))
    if weights:
        unknown = set(weights) - {c.__name__ for c in COUNT_OPTIONS}
        if unknown:
            raise ValueError(f"unknown user classes in --weights: {', '.join(sorted(unknown))}")
        for cls in COUNT_OPTIONS:
            cls.fixed_count = 0
            cls.weight = weights.get(cls.__name__, 0)
        environment.user_classes = [c for c in COUNT_OPTIONS if c in chosen and c.weight > 0]
    else:
        for cls, name in COUNT_OPTIONS.items():
            cls.fixed_count = max(0, int(getattr(options, name)))
        environment.user_classes = [c for c in COUNT_OPTIONS if c in chosen and c.fixed_count > 0]
        total = sum(c.fixed_count for c in environment.user_classes)
        if options.num_users not in (None, total):
            log.warning(
                "-u %s ignored: the user count is the sum of the counts, %d",
                options.num_users,
                total,
            )
        options.num_users = total
    if not environment.user_classes:
        raise ValueError("no user class to run: every count (or weight) is 0")
    log.info(
        "user mix: %s",
        ", ".join(
            f"{c.__name__}={c.fixed_count or f'weight {c.weight}'}"
            for c in environment.user_classes
        ),
    )


def check_p99(environment: Environment, **_: Any) -> None:
    """Set a failing exit code when a request's p99 is over its ``--max-p99-ms`` limit."""
    if isinstance(environment.runner, WorkerRunner):
        return
    limits = parse_limits(str(option(environment, "max_p99_ms", "")))
    if not limits:
        return
    over = []
    for entry in environment.stats.entries.values():
        limit = limits.get(entry.name, limits.get("*"))
        if limit is None or entry.num_requests == 0:
            continue
        p99 = entry.get_response_time_percentile(0.99)
        if p99 > limit:
            over.append(f"{entry.name} p99 {p99:.0f} ms > {limit:.0f} ms")
    if over:
        log.error("p99 over its limit: %s", "; ".join(over))
        failed = environment.stats.total.num_failures > 0
        environment.process_exit_code = (
            int(option(environment, "exit_code_on_error", 1)) if failed else 3
        )
    else:
        log.info("every p99 within its limit (%s)", str(option(environment, "max_p99_ms", "")))


# locust's event hooks are untyped: register the listeners without decorators
_events: Any = events
_events.init_command_line_parser.add_listener(add_options)
_events.init.add_listener(configure_mix)
_events.quitting.add_listener(check_p99)
