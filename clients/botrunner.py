"""Play seats through the public API with bots, until their game is over.

Two transports (``transport``), so the two can be compared in one run:

* ``"play"`` (the default): a Play stream (``Seat.play()`` / ``PlaySession``, many
  seats on one): the server pushes a prompt whenever a seat may act, with its view
  and its legal actions; the bot chooses and the seat answers with one act at the
  prompt's version.  A stale-version answer (``ABORTED``) is no failure: the game
  moved on and a fresh prompt follows.  The sessions are prompts-only by default (a
  bot decides on the view: no events are sent; ``prompts_only=False`` gets them, for
  comparison), and each seat's final view comes with its session's end.
* ``"unary"``: the unary loop: read the seat's view; if it may act, list its legal
  actions, let the bot choose, submit; otherwise wait for the next item of the seat's
  watch stream (or a poll interval, whichever comes first).

Each measures a move's latency (choice + act; the unary loop's includes listing the
legal actions) and counts refusals: ``FAILED_PRECONDITION`` / ``INVALID_ARGUMENT``
answers are *illegal* actions, ``DEADLINE_EXCEEDED`` answers are *timeouts*,
anything else an *error*.  After ``max_failures`` failures in a row it gives up (the
result says so).

The unary loop ends with one ``GetView`` of each seat, the final view (scores,
winners); the play transport reads it from the session's end (PlayClosed.final_view).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import grpc

from clients.bots.base import Bot
from clients.sdk import CallError, Seat
from clients.turn import wire_choice
from engine.rulesets import RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

Transport = Literal["play", "unary"]
TRANSPORTS: tuple[Transport, ...] = ("play", "unary")


@dataclass
class SeatResult:
    seat: int
    bot: str
    moves: int = 0
    illegal: int = 0
    timeouts: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds per move
    final_view: pb.View | None = None
    gave_up: bool = False

    @property
    def mean_latency_ms(self) -> float:
        return 1000 * sum(self.latencies) / len(self.latencies) if self.latencies else 0.0


async def _pump(seat: Seat, wake: asyncio.Event) -> None:
    with contextlib.suppress(CallError, asyncio.CancelledError):
        async for _ in seat.watch():
            wake.set()


async def play_seat(
    seat: Seat,
    bot: Bot,
    rng: random.Random,
    *,
    rules: RuleSet | None = None,
    poll: float = 0.5,
    max_failures: int = 10,
    transport: Transport = "play",
) -> SeatResult:
    """Play ``seat`` with ``bot`` until the game is over; the counts and latencies."""
    if transport == "play":
        (result,) = await play_seats([seat], [bot], [rng], rules=rules, max_failures=max_failures)
        return result
    if rules is None:
        rules = await _rules(seat)
    bot.setup(rules, seat.seat)
    result = SeatResult(seat.seat, bot.name)
    wake = asyncio.Event()
    pump = asyncio.create_task(_pump(seat, wake))
    failures = 0
    try:
        while True:
            wake.clear()
            view = await seat.view()
            if view.game_over:
                result.final_view = view
                return result
            if not view.may_act:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(poll):  # (wait_for may swallow a cancel on 3.11)
                        await wake.wait()
                continue
            started = time.perf_counter()
            try:
                legal = await seat.legal_actions()
                if not legal:
                    continue
                await seat.act(wire_choice(bot, view, legal, rng))
            except CallError as exc:
                failures += 1
                if exc.code in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.INVALID_ARGUMENT,
                ):
                    result.illegal += 1
                elif exc.code is grpc.StatusCode.DEADLINE_EXCEEDED:
                    result.timeouts += 1
                else:
                    result.errors += 1
                if failures >= max_failures:
                    result.gave_up = True
                    return result
                continue
            failures = 0
            result.moves += 1
            result.latencies.append(time.perf_counter() - started)
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump


async def _rules(seat: Seat) -> RuleSet:
    game = await seat.client.game(seat.game_id)
    return convert.rules_from_pb(game.rule_set)


def _count(result: SeatResult, exc: CallError) -> None:
    if exc.code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT):
        result.illegal += 1
    elif exc.code is grpc.StatusCode.DEADLINE_EXCEEDED:
        result.timeouts += 1
    else:
        result.errors += 1


async def play_seats(
    seats: Sequence[Seat],
    bots: Sequence[Bot],
    rngs: Sequence[random.Random],
    *,
    rules: RuleSet | None = None,
    max_failures: int = 10,
    in_turn_order: bool = False,
    prompts_only: bool = True,
) -> list[SeatResult]:
    """Play every seat (``bots[i]`` plays ``seats[i]``) on ONE Play stream until each
    one's game is over: one message (the act) per move; the counts and latencies.

    Prompts are answered one at a time, in the order they come.  ``in_turn_order``
    (every seat of the game is played here: a tournament) answers only the prompt of
    the seat first in the view's ``to_act``, as the engine in process does: where a
    claim window prompts several seats at once, who answers first is then never a
    matter of timing, and each bot's randomness is drawn exactly as in process.
    """
    if not seats:
        return []
    client = seats[0].client
    results: dict[tuple[str, int], SeatResult] = {}
    players: dict[tuple[str, int], tuple[Bot, random.Random]] = {}
    for seat, bot, rng in zip(seats, bots, rngs, strict=True):
        bot.setup(rules if rules is not None else await _rules(seat), seat.seat)
        results[(seat.game_id, seat.seat)] = SeatResult(seat.seat, bot.name)
        players[(seat.game_id, seat.seat)] = (bot, rng)
    failures: dict[tuple[str, int], int] = dict.fromkeys(results, 0)
    finals: dict[tuple[str, int], pb.View] = {}
    async with client.play_session(prompts_only=prompts_only) as session:
        for seat in seats:
            session.add(seat)
        async for prompt in session:
            key = (prompt.seat.game_id, prompt.seat.seat)
            result = results[key]
            if not prompt.legal_actions or result.gave_up:
                continue
            to_act = prompt.view.to_act
            if in_turn_order and to_act and to_act[0] != prompt.seat.seat:
                continue  # the first seat acts first; the others are prompted again
            bot, rng = players[key]
            started = time.perf_counter()
            try:
                await prompt.act(wire_choice(bot, prompt.view, prompt.legal_actions, rng))
            except CallError as exc:
                if exc.code is grpc.StatusCode.ABORTED:
                    continue  # the game moved on (a claim window answered): prompted again
                if exc.code is grpc.StatusCode.INVALID_ARGUMENT and not session.is_open(
                    prompt.seat
                ):
                    continue  # the game ended under this act (its session is over)
                failures[key] += 1
                _count(result, exc)
                if failures[key] >= max_failures:
                    result.gave_up = True
                    session.remove(prompt.seat)
                continue
            failures[key] = 0
            result.moves += 1
            result.latencies.append(time.perf_counter() - started)
        refused = dict(session.errors)
        for seat in seats:
            final = session.final_view(seat)
            if final is not None:
                finals[(seat.game_id, seat.seat)] = final
    for seat in seats:
        key = (seat.game_id, seat.seat)
        if key in refused:
            raise refused[key]
        if not results[key].gave_up:
            # (the session's end carries it; a seat given up on reads it)
            view = finals.get(key) or await seat.view()
            if view.game_over:
                results[key].final_view = view
    return [results[(s.game_id, s.seat)] for s in seats]
