"""``dump``: ``closer``, shedding its costliest card once an open opponent is about to go
out and its own hand is still far from its contract; legal, reproducible, ``closer``'s
games at two seats."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots import resolve
from clients.bots.base import Situation
from clients.bots.closer import CloserBot
from clients.bots.dump import DumpBot, DumpFarBot, lost_race
from engine.actions import Action, Discard
from engine.cards import Card, cards_from_codes
from engine.melds import Meld, build_meld
from engine.rulesets import CONTRACT, WHISKERTRAIL, MeldKind
from tests.support.playouts import bot_moves, legal_game

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize(
    "bot",
    ["clients.bots.dump:DumpBot", "clients.bots.dump:DumpFarBot", "clients.bots.dump:DumpFreeBot"],
)
def test_dump_only_picks_legal_actions(seats: int, bot: str) -> None:
    seed = f"dump/{seats}".encode()
    assert legal_game(WHISKERTRAIL, [bot] * seats, seed, random.Random(0)) > 0


def test_dump_is_deterministic_for_a_seed() -> None:
    assert bot_moves(SHORT, 4, DumpBot, b"dump:1") == bot_moves(SHORT, 4, DumpBot, b"dump:1")


def test_dump_plays_closers_games_at_two_seats_and_in_contract_otherwise_at_four() -> None:
    """``best`` is ``dumpfar``: where the rule cannot apply (one opponent; no free pile)
    its games are ``closer``'s."""
    assert resolve("best") is DumpFarBot
    assert bot_moves(SHORT, 2, DumpFarBot, b"dump:2") == bot_moves(SHORT, 2, CloserBot, b"dump:2")
    contract = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:3])
    same = [bot_moves(contract, 4, b, b"dump:c") for b in (DumpFarBot, CloserBot)]
    assert same[0] == same[1]
    fours = [bot_moves(SHORT, 4, b, b"dump:4") for b in (DumpFarBot, CloserBot)]
    assert fours[0] != fours[1]


def _hand(codes: list[str]) -> tuple[Card, ...]:
    return tuple(sorted(cards_from_codes(codes), key=lambda c: c.id))


def _set(codes: list[str], owner: int) -> Meld:
    return build_meld(MeldKind.SET, cards_from_codes(codes), WHISKERTRAIL).with_owner(owner)


def _far(opponent_cards: int) -> tuple[Situation, list[Action]]:
    # round 1 (two groups of three), four seats, seat 0 closed with two pairs (2s, aces):
    # two cards short at best (an ace discarded: three); seat 2 open (not the next seat)
    hand = _hand(["2C", "2D", "4H", "5S", "6D", "7C", "8H", "9S", "KC", "AS", "AH"])
    table = (_set(["3C", "3D", "3H"], 2), _set(["QC", "QD", "QS"], 2))
    sit = Situation(
        WHISKERTRAIL, 1, 0, "play", hand, False, table, None, None,
        4, 0, (11, 10, opponent_cards, 10), (False, False, True, False), (0,) * 4, 5, 60,
        False, 0, 12,
    )  # fmt: skip
    return sit, [Discard(c.id) for c in hand]


def _choose(bot: CloserBot, sit: Situation, legal: list[Action]) -> Action:
    bot.setup(sit.rules, sit.seat)
    return bot.choose(sit, legal, random.Random(0))


def test_dump_sheds_the_costliest_card_once_the_race_is_lost() -> None:
    sit, legal = _far(1)
    assert lost_race(sit, 1, 3)
    aces = {Discard(c.id) for c in sit.hand if c.rank == 1}
    assert _choose(DumpBot(0), sit, legal) in aces
    assert _choose(CloserBot(0), sit, legal) not in aces


def test_dump_keeps_closers_discard_while_the_open_opponent_holds_more() -> None:
    sit, legal = _far(5)
    assert not lost_race(sit, 2, 3)
    assert _choose(DumpFarBot(0), sit, legal) == _choose(CloserBot(0), sit, legal)
