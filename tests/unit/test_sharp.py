"""``sharp``: expert's discards, but not a card an opponent who may take it is known to
collect; its card-tracking memory notes who threw what."""

from __future__ import annotations

import random

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.sharp import SharpBot
from clients.bots.tracking import TableMemory
from engine.actions import Discard
from engine.cards import cards_from_codes
from engine.rulesets import CONTRACT, WHISKERTRAIL

RULES = WHISKERTRAIL
# closed, two pairs and junk: round 1 (2 sets of 3); the pile's top is 3C
HAND = cards_from_codes(["7C", "7D", "9S", "9H", "KC", "QD", "5S", "3H", "2D", "JC", "4S"])
TOP = cards_from_codes(["3C"])[0]


def _situation() -> Situation:
    return Situation(
        RULES, 1, 0, "play", tuple(sorted(HAND, key=lambda c: c.id)), False, (), TOP, None,
        2, 0, (11, 10), (False, False), (0, 0), 5, 60, False, 0, 4,
    )  # fmt: skip


def _discard(bot: ExpertBot, sit: Situation) -> Discard:
    legal = [Discard(c.id) for c in sit.hand]
    choice = bot.choose(sit, legal, random.Random(0))
    assert isinstance(choice, Discard)
    return choice


def test_it_keeps_a_card_of_a_rank_the_next_seat_is_known_to_collect() -> None:
    sit = _situation()
    expert = ExpertBot(1)
    expert.setup(RULES, 0)
    thrown = next(c for c in HAND if c.id == _discard(expert, sit).card)
    # the opponent took a card of that rank (of another suit, far from it) from the pile
    wanted = next(
        c
        for c in cards_from_codes([f"{r}{s}" for r in ("K", "Q", "J", "5", "3") for s in "HSDC"])
        if c.rank == thrown.rank and c.suit != thrown.suit and c not in HAND
    )
    sharp = SharpBot(1)
    sharp.setup(RULES, 0)
    sharp.memory = TableMemory(
        deal=(1, 0), stock_size=60, sizes=(11, 10), pile=[TOP.id], unknown=4, held={1: {wanted.id}}
    )
    chosen = next(c for c in HAND if c.id == _discard(sharp, sit).card)
    assert chosen.rank != thrown.rank
    plain = SharpBot(1)  # knowing nothing, it discards as expert does
    plain.setup(RULES, 0)
    assert _discard(plain, sit).card == thrown.id


def test_its_memory_notes_who_threw_each_discard_it_saw() -> None:
    """Contract: a May I? window names the discarder (the seat before ``current``);
    whiskertrail: the top at its turn was the previous seat's discard."""
    memory = TableMemory()
    hand = tuple(cards_from_codes(["2C", "3C", "4C"], 2, 3))
    top = cards_from_codes(["9H"], 2, 3)[0]
    claim = Situation(
        CONTRACT, 2, 0, "claim", hand, False, (), top, None,
        4, 3, (3, 10, 10, 10), (False,) * 4, (0,) * 4, 5, 40, False, 0, 6,
    )  # fmt: skip
    memory.observe(claim)
    assert memory.thrown == {2: {top.id}}
    memory = TableMemory()
    draw = claim._replace(rules=WHISKERTRAIL, phase="draw", current=0, seat=0, seats=2)
    draw = draw._replace(hand_sizes=(3, 10), opened_seats=(False,) * 2, scores=(0, 0))
    memory.observe(draw)
    assert memory.thrown == {1: {top.id}}


def test_a_clone_knows_what_it_knew_and_shares_nothing_with_it() -> None:
    bot = SharpBot(seed=3)
    memory = bot.memory
    memory.pile, memory.unknown = [5, 9], 2
    memory.held, memory.thrown = {1: {7}}, {2: {11}}
    memory.discarded(13)  # its own discard on top: remembered as its own until it looks
    twin = bot.clone()
    assert twin.memory == memory and twin.memory is not memory
    assert twin.memory._own_top == 13
    twin.memory.pile.append(21)
    twin.memory.held[1].add(22)
    twin.memory.thrown[2].add(23)
    assert memory.pile == [5, 9, 13] and memory.held == {1: {7}} and memory.thrown == {2: {11}}
