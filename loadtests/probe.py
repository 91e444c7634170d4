"""A probe: a few tables played by a client outside the load generator, timed.

    python -m loadtests.probe --target 127.0.0.1:50051 --transport play --seconds 30

Locust's users share one process, gevent and grpc's gevent mode, and that client adds
its own queueing to every latency it reports once the machine is busy.  The probe is
a client as an integrator writes one: a process of its own, grpc.aio and the stubs
generated from ``proto/``.  Run beside a load test (``loadtests.run --probe-tables``),
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
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from clients.bots.base import Bot
from clients.bots.registry import make_bot
from clients.turn import wire_choice
from engine.rulesets import ruleset
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.play import parse_kinds

if TYPE_CHECKING:  # (the stub's asyncio typing exists in the generated .pyi only)
    from glintwick.v1.game_pb2_grpc import GameServiceAsyncStub as Stub

DEFAULT_KINDS = "contract:4,whiskertrail:2,whiskertrail:3,whiskertrail:4"


@dataclass
class Samples:
    """Milliseconds per sample name; a sample that started before ``counting_from``
    (a ``perf_counter`` time: the warm-up's end) is not counted."""

    values: dict[str, list[float]] = field(default_factory=dict)
    games: int = 0
    counting_from: float = 0.0

    def add(self, name: str, since: float) -> None:
        if since >= self.counting_from:
            self.values.setdefault(name, []).append((time.perf_counter() - since) * 1000)

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


@dataclass
class Table:
    """One probe table's game: its stub, seats' tokens and bots."""

    stub: Stub
    game_id: str
    tokens: list[str]
    bots: list[Bot]
    rng: random.Random
    think: float
    deadline: float

    async def call(self, method: Any, request: Any, seat: int) -> Any:
        """A unary call as ``seat`` (its token), with the table's deadline."""
        auth = (("authorization", f"Bearer {self.tokens[seat]}"),)
        return await method(request, metadata=auth, timeout=self.deadline)

    async def view(self, seat: int) -> pb.View:
        view: pb.View = await self.call(
            self.stub.GetView, pb.GetViewRequest(game_id=self.game_id), seat
        )
        return view

    async def pause(self) -> None:
        await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5) if self.think > 0 else 0)


async def new_table(stub: Stub, kind: tuple[str, int], rng: random.Random, think: float) -> Table:
    rule_set, seats = kind
    deadline = 10.0
    game = await stub.CreateGame(
        pb.CreateGameRequest(rule_set_name=rule_set, seats=seats), timeout=deadline
    )
    tokens = []
    for seat in range(seats):
        request = pb.JoinGameRequest(game_id=game.game_id, seat=seat, name=f"probe-{seat}")
        tokens.append((await stub.JoinGame(request, timeout=deadline)).token)
    bots = [make_bot("greedy", seed=rng.randrange(1 << 30)) for _ in range(seats)]
    for seat, bot in enumerate(bots):
        bot.setup(ruleset(rule_set), seat)
    return Table(stub, game.game_id, tokens, bots, rng, think, deadline)


async def play_unary(table: Table, samples: Samples, until: float) -> None:
    """The load's unary table loop (``loadtests.play.play_table``), timed."""
    seat, acted = 0, None
    view = await table.view(seat)
    while not view.game_over and time.perf_counter() < until:
        if not view.may_act:
            seat = view.to_act[0] if view.to_act else seat
            view = await table.view(seat)
            continue
        legal = await table.call(
            table.stub.ListLegalActions, pb.ListLegalActionsRequest(game_id=table.game_id), seat
        )
        if legal.version == view.version and legal.actions:
            if acted is not None and legal.version > acted[1]:
                samples.add("cycle", acted[0])
                acted = None
            action = wire_choice(table.bots[seat], view, legal.actions, table.rng)
            await table.pause()
            acted = (time.perf_counter(), view.version)
            request = pb.SubmitActionRequest(
                game_id=table.game_id,
                expected_version=view.version,
                request_id=uuid.uuid4().hex,
                action=action,
            )
            try:
                await table.call(table.stub.SubmitAction, request, seat)
                samples.add("call", acted[0])
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    raise
        view = await table.view(seat)


async def play_stream(table: Table, samples: Samples, until: float) -> None:
    """The load's Play table (``loadtests.play.play_table_stream``), timed."""
    outgoing: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
    for seat, token in enumerate(table.tokens):
        subscribe = pb.PlaySubscribe(
            game_id=table.game_id, seat=seat, token=token, prompts_only=True
        )
        outgoing.put_nowait(pb.PlayRequest(subscribe=subscribe))

    async def requests() -> AsyncIterator[pb.PlayRequest]:
        while (request := await outgoing.get()) is not None:
            yield request

    call = table.stub.Play(requests(), timeout=table.deadline * 360)
    sent: dict[str, float] = {}
    acted: tuple[float, int] | None = None
    open_seats = set(range(len(table.tokens)))
    try:
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "prompt":
                prompt = message.prompt
                if acted is not None and prompt.version > acted[1]:
                    samples.add("cycle", acted[0])
                    acted = None
                to_act = list(prompt.view.to_act)
                if not prompt.legal_actions or (to_act and to_act[0] != message.seat):
                    continue
                if time.perf_counter() >= until:
                    break
                bot = table.bots[message.seat]
                action = wire_choice(bot, prompt.view, prompt.legal_actions, table.rng)
                await table.pause()
                act = pb.PlayAct(
                    game_id=table.game_id,
                    seat=message.seat,
                    expected_version=prompt.version,
                    request_id=uuid.uuid4().hex,
                    action=action,
                )
                sent[act.request_id] = now = time.perf_counter()
                acted = (now, prompt.version)
                outgoing.put_nowait(pb.PlayRequest(act=act))
            elif kind == "result":
                at = sent.pop(message.result.request_id, None)
                if at is not None:
                    samples.add("call", at)
                error = message.result.error
                if message.result.HasField("error") and error.code != "ABORTED":
                    raise RuntimeError(f"act refused: {error.code} {error.message}")
            elif kind == "closed":
                if message.closed.HasField("error"):
                    raise RuntimeError(f"session closed: {message.closed.error.code}")
                open_seats.discard(message.seat)
                if not open_seats:
                    break
            elif kind == "error":
                raise RuntimeError(f"stream error: {message.error.code}")
    finally:
        outgoing.put_nowait(None)
        call.cancel()


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
    async with grpc.aio.insecure_channel(
        target, options=[("grpc.use_local_subchannel_pool", 1)], interceptors=[interceptor]
    ) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        while time.perf_counter() < until:
            table = await new_table(stub, rng.choice(kinds), rng, think)
            play = play_stream if transport == "play" else play_unary
            samples.games += 1
            await play(table, samples, until)


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
