"""Play seats through the public API with bots, until their game is over.

Two transports (``transport``), so the two can be compared in one run:

* ``"play"`` (the default): a Play stream (``PlaySession``, many seats on one): the
  server pushes a prompt whenever a seat may act, with its view and its legal
  actions; the bot chooses and the seat answers with one act at the prompt's
  version.  The sessions are prompts-only by default (a bot decides on the view: no
  events are sent; ``prompts_only=False`` gets them, for comparison), and each
  seat's final view comes with its session's end.
* ``"unary"``: unary calls: read the seat's view; if it may act, list its legal
  actions, let the bot choose, submit; otherwise read the view of the seat to act
  when it is played here too, else wait for the next item of the game's watch stream
  (or a poll interval, whichever comes first).  The final view is the view that
  says the game is over.

Everything a seat's play decides (which prompt to answer, what a refusal counts as,
when to give up, versions and request ids) is the table core's
(:mod:`clients.table`); the transports are its runners' (:mod:`clients.runners`).
Each move's latency (choice + act; by unary calls the listing of the legal actions
too) and each refusal are counted in the seat's :class:`~clients.table.SeatResult`;
after ``max_failures`` failures in a row the seat is given up (the result says so).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Literal

from clients.bots.base import Bot
from clients.runners import PlayRunner, UnaryRunner
from clients.sdk import Seat
from clients.table import SeatResult, Table
from engine.rulesets import RuleSet
from glintwick import convert

__all__ = ["TRANSPORTS", "SeatResult", "Transport", "play_seat", "play_seats"]

Transport = Literal["play", "unary"]
TRANSPORTS: tuple[Transport, ...] = ("play", "unary")


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
    (result,) = await play_seats(
        [seat], [bot], [rng], rules=rules, poll=poll, max_failures=max_failures, transport=transport
    )
    return result


async def play_seats(
    seats: Sequence[Seat],
    bots: Sequence[Bot],
    rngs: Sequence[random.Random],
    *,
    rules: RuleSet | None = None,
    max_failures: int = 10,
    in_turn_order: bool = False,
    prompts_only: bool = True,
    transport: Transport = "play",
    poll: float = 0.5,
) -> list[SeatResult]:
    """Play every seat (``bots[i]`` plays ``seats[i]``) until each one's game is over;
    the counts and latencies.  ``"play"``: all of them on ONE Play stream, one message
    (the act) per move; ``"unary"``: the seats of each game by one unary runner.

    ``in_turn_order`` (every seat of a game is played here: a tournament) answers only
    the seat first in the view's ``to_act``, as the engine in process does, but each
    seat of a May I? window on its one prompt there as soon as it comes (the server
    prompts a seat once a window): the answers' order never changes the window's
    outcome, and each bot draws from its own generator, so the games are those played
    in process whatever the timing.
    """
    if not seats:
        return []
    table = Table(in_turn_order=in_turn_order, max_failures=max_failures)
    for seat, bot, rng in zip(seats, bots, rngs, strict=True):
        bot.setup(rules if rules is not None else await _rules(seat), seat.seat)
        table.sit(seat.game_id, seat.seat, bot, rng)
    if transport == "unary":
        games: dict[str, list[Seat]] = {}
        for seat in seats:
            games.setdefault(seat.game_id, []).append(seat)
        await asyncio.gather(*(UnaryRunner(table, s, poll=poll).run() for s in games.values()))
    else:
        await _play_stream(table, seats, prompts_only)
    return [table.result(seat.game_id, seat.seat) for seat in seats]


async def _play_stream(table: Table, seats: Sequence[Seat], prompts_only: bool) -> None:
    async with seats[0].client.play_session(prompts_only=prompts_only) as session:
        for seat in seats:
            session.add(seat)
        await PlayRunner(table).run(session)
        refused = dict(session.errors)
    for seat in seats:
        key = (seat.game_id, seat.seat)
        if key in refused:
            raise refused[key]
        result = table.result(*key)
        if not result.gave_up and result.final_view is None:
            # (the session's end carries it; without it, the seat's view says)
            view = await seat.view()
            if view.game_over:
                table.closed(seat.game_id, seat.seat, view)


async def _rules(seat: Seat) -> RuleSet:
    game = await seat.client.game(seat.game_id)
    return convert.rules_from_pb(game.rule_set)
