"""A probe: a few tables played by a client outside the load generator, timed.

    python -m loadtests.probe --target 127.0.0.1:50051 --transport play --seconds 30

Locust's users share one process, gevent and grpc's gevent mode, and that client adds
its own queueing to every latency it reports once the machine is busy.  The probe is
a client as an integrator writes one: a process of its own, grpc.aio through the SDK
(no retries), its tables played by the table core's runners (``clients/runners.py``).
Run beside a load test (``loadtests.run --probe-tables``),
it says what a player sees while the load runs, the load generator's tail left out.

Each table takes every seat of a game and plays it with the ``greedy`` bot, thinking
``--think-time`` on average before each move, as the load's table users do; then the
next game, until ``--seconds`` are over.  ``--transport unary``: GetView,
ListLegalActions and SubmitAction; ``play``: one Play stream per table, prompts only.
Samples per move: ``call`` (SubmitAction's answer; a Play act's result) and ``cycle``
(from sending the move to holding the next decision's legal actions).  The report is
one JSON object on stdout (``--out`` a file): for each sample its count, p50, p99, max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

from clients.bots.registry import make_bot
from clients.runners import Hooks, PlayRunner, UnaryRunner
from clients.sdk import CallError, GlintwickClient, RetryPolicy
from clients.table import Act, Table
from engine.rulesets import ruleset
from loadtests.play import parse_kinds

T = TypeVar("T")

DEFAULT_KINDS = "contract:4,whiskertrail:2,whiskertrail:3,whiskertrail:4"


@dataclass
class Samples:
    """Milliseconds per sample name; a sample that started before ``counting_from``
    (a ``perf_counter`` time: the warm-up's end) is not counted."""

    values: dict[str, list[float]] = field(default_factory=dict)
    games: int = 0
    counting_from: float = 0.0

    def add(self, name: str, since: float, until: float | None = None) -> None:
        """A sample from ``since`` to ``until`` (default: now)."""
        if since >= self.counting_from:
            end = time.perf_counter() if until is None else until
            self.values.setdefault(name, []).append((end - since) * 1000)

    def summary(self) -> dict[str, dict[str, float]]:
        return {name: percentiles(ms) for name, ms in sorted(self.values.items())}


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """Count, p50, p99 (nearest rank) and max of ``values``."""
    ordered = sorted(values)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    if not ordered:
        return {"count": 0}
    return {"count": len(ordered), "p50": rank(0.5), "p99": rank(0.99), "max": ordered[-1]}


class _Timed(Hooks):
    """A probe table's samples and think time, around the runner's calls: ``call`` from
    an act sent to its answer, ``cycle`` from an act sent to the next turn held."""

    def __init__(self, samples: Samples, rng: random.Random, think: float) -> None:
        self.samples = samples
        self.rng = rng
        self.think = think
        self.sent: tuple[float, int] | None = None  # the last act's: when, at which version

    async def call(self, name: str, call: Callable[[], Awaitable[T]], act: Act | None = None) -> T:
        if act is None:
            return await call()
        sent = time.perf_counter()
        self.sent = (sent, act.expected_version)
        try:
            answer = await call()
        except CallError:
            self.samples.add("call", sent)  # (a refusal is an answer too)
            raise
        self.samples.add("call", sent)
        return answer

    async def acted(self, act: Act, held: float) -> None:
        if self.sent is not None and act.expected_version > self.sent[1]:
            self.samples.add("cycle", self.sent[0], held)
            self.sent = None
        await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5) if self.think > 0 else 0)


async def play_table(
    client: GlintwickClient,
    transport: str,
    kind: tuple[str, int],
    rng: random.Random,
    think: float,
    samples: Samples,
) -> None:
    """One table's game, every seat joined and played by the ``greedy`` bot through the
    table core's runner of ``transport`` (the load's tables: ``loadtests.play``); a
    refusal other than a race fails it."""
    rule_set, seats = kind
    game = await client.create_game(rule_set, seats=seats)
    joined = [
        await client.join(game.game_id, seat=seat, name=f"probe-{seat}") for seat in range(seats)
    ]
    table = Table(max_failures=1)
    for seat in range(seats):
        bot = make_bot("greedy", seed=rng.randrange(1 << 30))
        bot.setup(ruleset(rule_set), seat)
        table.sit(game.game_id, seat, bot, rng)
    hooks = _Timed(samples, rng, think)
    if transport == "play":
        # prompts only: the bots decide on the prompt's view, and the table holds every
        # seat (events would come once per seat)
        async with client.play_session(prompts_only=True) as session:
            for handle in joined:
                session.add(handle)
            await PlayRunner(table, hooks).run(session)
            for error in session.errors.values():
                raise RuntimeError(f"session closed: {error.code.name}")
    else:
        await UnaryRunner(table, joined, hooks).run()
    for result in table.results:
        if result.gave_up:
            raise RuntimeError(f"act refused: {result.refusal}")


async def probe_table(
    target: str,
    number: int,
    transport: str,
    kinds: list[tuple[str, int]],
    think: float,
    until: float,
    samples: Samples,
    start_after: float = 0.0,
) -> None:
    rng = random.Random(number)
    await asyncio.sleep(start_after)
    # a connection and a client address of its own, as each of the load's tables has
    address = f"10.250.{number >> 8 & 255}.{number & 255}"
    interceptor = _ForwardedFor(address)
    channel = grpc.aio.insecure_channel(
        target, options=[("grpc.use_local_subchannel_pool", 1)], interceptors=[interceptor]
    )
    # (no retries: the load's tables make none either)
    async with GlintwickClient(target, channel=channel, retry=RetryPolicy(attempts=1)) as client:
        while time.perf_counter() < until:
            samples.games += 1
            try:
                async with asyncio.timeout(until - time.perf_counter()) as left:
                    await play_table(client, transport, rng.choice(kinds), rng, think, samples)
            except TimeoutError:
                if not left.expired():
                    raise
                return  # (a game still on at the end is left where it is)


class _ForwardedFor(
    grpc.aio.UnaryUnaryClientInterceptor,
    grpc.aio.StreamStreamClientInterceptor,
):
    """``x-forwarded-for`` on every call: the probe is a client of its own to the limits
    (the load test's server trusts the local address as a proxy)."""

    def __init__(self, address: str) -> None:
        self.address = address

    def _details(self, details: Any) -> Any:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), ("x-forwarded-for", self.address))
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_stream_stream(
        self, continuation: Any, details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(self._details(details), request_iterator)


async def run_probe(
    target: str,
    transport: str,
    tables: int,
    seconds: float,
    think: float,
    kinds: str,
    *,
    ramp: float = 0.0,
    warmup: float = 0.0,
    first_table: int = 1,
) -> dict[str, Any]:
    """``tables`` tables for ``seconds``: their starts spread evenly over ``ramp``
    seconds, and what the first ``warmup`` seconds saw left out of the samples (as a
    step of the load test leaves out its users' spawning: all at once, the creates and
    joins of 200 tables take the first moves' median to 40-130 ms)."""
    started = time.perf_counter()
    samples = Samples(counting_from=started + warmup)
    until = started + seconds
    parsed = parse_kinds(kinds)
    outcomes = await asyncio.gather(
        *(
            probe_table(
                target, first_table + n, transport, parsed, think, until, samples, ramp * n / tables
            )
            for n in range(tables)
        ),
        return_exceptions=True,
    )
    failures = [f"{type(e).__name__}: {e}" for e in outcomes if isinstance(e, BaseException)]
    return {
        "transport": transport,
        "tables": tables,
        "seconds": seconds,
        "warmup": warmup,
        # (moves a second: the call samples over these seconds)
        "counted_seconds": max(0.0, min(seconds, time.perf_counter() - started) - warmup),
        "games_started": samples.games,
        "samples": samples.summary(),
        "failures": failures,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="gRPC host:port")
    parser.add_argument("--transport", choices=["unary", "play"], default="play")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--think-time", type=float, default=0.5)
    parser.add_argument("--table-kinds", default=DEFAULT_KINDS)
    parser.add_argument(
        "--ramp", type=float, default=0.0, help="seconds over which the tables' starts spread"
    )
    parser.add_argument(
        "--warmup", type=float, default=0.0, help="seconds at the start left out of the samples"
    )
    parser.add_argument(
        "--first-table",
        type=int,
        default=1,
        help="the first table's number (its client address): several probes side by side",
    )
    parser.add_argument("--out", type=Path, help="write the report here (else stdout)")
    args = parser.parse_args(argv)
    report = asyncio.run(
        run_probe(
            args.target,
            args.transport,
            args.tables,
            args.seconds,
            args.think_time,
            args.table_kinds,
            ramp=args.ramp,
            warmup=args.warmup,
            first_table=args.first_table,
        )
    )
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
