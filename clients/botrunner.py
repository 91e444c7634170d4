"""Play one seat through the public API with a bot, until the game is over.

The loop: read the seat's view; if it may act, list its legal actions, let the bot
choose, submit; otherwise wait for the next item of the seat's watch stream (or a
poll interval, whichever comes first).  It measures each move's latency (legal
actions + choice + submit) and counts refusals: ``FAILED_PRECONDITION`` /
``INVALID_ARGUMENT`` answers are *illegal* actions, ``DEADLINE_EXCEEDED`` answers are
*timeouts*, anything else an *error*.  After ``max_failures`` failures in a row it
gives up (the result says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from clients.bots.base import Bot
from clients.sdk import CallError, Seat
from clients.turn import wire_choice
from engine.rulesets import RuleSet
from glintwick import convert


@dataclass
class SeatResult:
    seat: int
    bot: str
    moves: int = 0
    illegal: int = 0
    timeouts: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds per move
    final_view: dict[str, Any] | None = None
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
) -> SeatResult:
    """Play ``seat`` with ``bot`` until the game is over; the counts and latencies."""
    if rules is None:
        game = await seat.client.game(seat.game_id)
        rules = convert.rules_from_pb(game.rule_set)
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
                result.final_view = convert.view_from_pb(view)
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
