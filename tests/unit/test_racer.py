"""``racer``: expert's games exactly where the race is not on (two seats, contract, nobody
open); at four whiskertrail seats, once an opponent is open, a costly card goes first."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots.base import Bot, Situation
from clients.bots.expert import ExpertBot
from clients.bots.racer import RacerBot, racing
from engine.actions import Discard
from engine.cards import cards_from_codes
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from tests.support.playouts import bot_moves

_moves = bot_moves


@pytest.mark.parametrize(("rules", "seats"), [(WHISKERTRAIL, 2), (CONTRACT, 4)])
def test_it_plays_experts_games_where_the_race_is_not_on(rules: RuleSet, seats: int) -> None:
    short = dataclasses.replace(rules, contracts=rules.contracts[:3])
    for i in range(2):
        seed = f"racer:{i}".encode()
        assert _moves(short, seats, RacerBot, seed) == _moves(short, seats, ExpertBot, seed)


def test_it_plays_otherwise_at_four_whiskertrail_seats() -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    seeds = [f"racer:{i}".encode() for i in range(3)]
    assert any(_moves(short, 4, RacerBot, s) != _moves(short, 4, ExpertBot, s) for s in seeds)


def _situation(opened: tuple[bool, ...]) -> Situation:
    # closed, round 3 (a set of 4 and a run of 4), nothing on the table: expert keeps
    # the ace of spades for the outs of its spades and throws the 8; a racer throws
    # the ace (15 points)
    hand = cards_from_codes(["QC", "6D", "TH", "AS", "2S", "5S", "8S", "5D", "AH", "TH", "QH"])
    top = cards_from_codes(["TD"])[0]
    seats = len(opened)
    return Situation(
        WHISKERTRAIL, 3, 0, "play", tuple(sorted(hand, key=lambda c: c.id)), False, (),
        top, None, seats, 0, (11,) * seats, opened, (0,) * seats, 5, 60, False, 0, 8,
    )  # fmt: skip


def test_once_an_opponent_is_open_it_sheds_a_costlier_card_than_expert() -> None:
    quiet = _situation((False, False, False, False))
    race = _situation((False, False, True, False))
    assert not racing(quiet, 3) and racing(race, 3)
    assert not racing(_situation((False, True)), 3)  # two seats: never
    legal = [Discard(c.id) for c in race.hand]
    by_id = {c.id: c for c in race.hand}

    def discard(bot: Bot, sit: Situation) -> int:
        bot.setup(WHISKERTRAIL, 0)
        choice = bot.choose(sit, legal, random.Random(0))
        assert isinstance(choice, Discard)
        return WHISKERTRAIL.penalty(by_id[choice.card])

    assert discard(RacerBot(1), quiet) == discard(ExpertBot(1), quiet)
    assert discard(RacerBot(1), race) > discard(ExpertBot(1), race)
