"""The four-seat whiskertrail variants of ``clients/bots/passed.py`` and
``clients/bots/nextseat.py`` (docs/BOT_STUDIES.md, none kept): what the next seat
passed read from the stock's size; legal, reproducible games."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots.closer import CloserBot
from clients.bots.expert import ExpertBot
from clients.bots.nextseat import (
    ClosedNextCalmBot,
    ClosedNextRushBot,
    ClosedNextRushTwoBot,
    DangerFewBot,
    NextGuardBot,
    NextRushBot,
    PileLiveBot,
    PileLiveThreeBot,
)
from clients.bots.passed import PassLiveBot, PassOpenBot, PassTieBot, passed_rank
from clients.turn import engine_turn
from engine.actions import Discard, Draw, DrawSource
from engine.cards import card, cards_from_codes
from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from tests.support.playouts import bot_moves


@pytest.mark.parametrize(
    "bot",
    [
        PassTieBot,
        PassLiveBot,
        PassOpenBot,
        DangerFewBot,
        NextRushBot,
        NextGuardBot,
        PileLiveBot,
        PileLiveThreeBot,
        ClosedNextRushBot,
        ClosedNextRushTwoBot,
        ClosedNextCalmBot,
    ],
)
def test_the_variants_play_reproducible_games(bot: type[CloserBot]) -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    assert bot_moves(short, 4, bot, b"nextseat") == bot_moves(short, 4, bot, b"nextseat")


def test_passed_rank_prefers_a_passed_rank_and_never_a_joker() -> None:
    seven, king, joker = cards_from_codes(["7C", "KS", "JK"])
    passed = frozenset({7})
    assert passed_rank(seven, passed) == 0
    assert passed_rank(king, passed) == 1
    assert passed_rank(joker, passed) == 1


def test_pass_knows_which_of_its_discards_the_closed_next_seat_passed() -> None:
    """Along a whole four-seat game: whenever the bot reads a pass (all three others drew
    from the stock), the next seat did draw from the stock with that discard on top."""
    bot = PassTieBot(0)
    others = [ExpertBot(s) for s in range(1, 4)]
    bot.setup(WHISKERTRAIL, 0)
    for s, o in enumerate(others, 1):
        o.setup(WHISKERTRAIL, s)
    state = GameState.new_game(WHISKERTRAIL, 4, b"nextseat:passed")
    rng = random.Random(0)
    truth: set[int] = set()
    deal = (state.round_number, state.exhaustions)
    mine: int | None = None
    checked = 0
    while not state.is_terminal():
        seat = state.to_act[0]
        if (state.round_number, state.exhaustions) != deal:
            deal, truth, mine = (state.round_number, state.exhaustions), set(), None
        top = state.discards[-1].id if state.discards else None
        next_closed = not state.opened[1]
        player = bot if seat == 0 else others[seat - 1]
        state, action, _ = engine_turn(state, seat, player, rng)
        if seat == 0 and isinstance(action, Discard):
            mine = action.card if next_closed else None
        if seat == 1 and action == Draw(DrawSource.STOCK) and top is not None and top == mine:
            truth.add(card(mine, WHISKERTRAIL.decks).rank)
        if (
            seat == 0
            and isinstance(action, Draw)
            and (state.round_number, state.exhaustions) == deal
        ):
            assert bot._passed_ranks <= truth
            checked += bool(bot._passed_ranks)
    assert checked > 20
