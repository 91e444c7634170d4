"""The expert variants measured and not kept (``clients.bots.tried``, ``clients.bots.deep``)
play what they say: with no weight on the penalty, ``mix`` is ``expert`` move for move;
with its weight it plays other discards; ``openlow`` takes a cheap pile card once open;
``deep`` is expert where it does not look further, and plays otherwise where it does."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots.base import Bot, Situation
from clients.bots.deep import DeepBot
from clients.bots.expert import ExpertBot
from clients.bots.tried import MixBot, OpenLowBot
from engine.actions import Action, Draw, DrawSource
from engine.cards import cards_from_codes
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from tests.support.playouts import bot_moves


def _moves(rules: RuleSet, make: type[Bot], seed: bytes) -> list[Action]:
    return bot_moves(rules, rules.min_players, make, seed)


class _Zero(MixBot):
    alpha = 0.0


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT], ids=lambda r: r.name)
def test_mix_without_weight_is_expert_and_with_it_plays_otherwise(rules: RuleSet) -> None:
    short = dataclasses.replace(rules, contracts=rules.contracts[:3])
    seeds = [f"tried:{i}".encode() for i in range(3)]
    assert all(_moves(short, _Zero, s) == _moves(short, ExpertBot, s) for s in seeds)
    assert any(_moves(short, MixBot, s) != _moves(short, ExpertBot, s) for s in seeds)


def test_openlow_takes_a_cheap_pile_card_once_open() -> None:
    hand = tuple(sorted(cards_from_codes(["KC", "3H"]), key=lambda c: c.id))
    top = cards_from_codes(["2D"])[0]
    sit = Situation(
        WHISKERTRAIL, 1, 0, "draw", hand, True, (), top, None,
        2, 0, (2, 10), (True, False), (0, 0), 5, 60, False, 0, 20,
    )  # fmt: skip
    legal = [Draw(DrawSource.STOCK), Draw(DrawSource.DISCARD)]
    for make, source in ((OpenLowBot, DrawSource.DISCARD), (ExpertBot, DrawSource.STOCK)):
        bot = make(1)
        bot.setup(WHISKERTRAIL, 0)
        assert bot.choose(sit, legal, random.Random(0)) == Draw(source)


class _Shallow(DeepBot):
    min_missing = 99


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT], ids=lambda r: r.name)
def test_deep_is_expert_where_it_does_not_look_further(rules: RuleSet) -> None:
    short = dataclasses.replace(rules, contracts=rules.contracts[:4])
    seeds = [f"deep:{i}".encode() for i in range(3)]
    assert all(_moves(short, _Shallow, s) == _moves(short, ExpertBot, s) for s in seeds)
    assert any(_moves(short, DeepBot, s) != _moves(short, ExpertBot, s) for s in seeds)
