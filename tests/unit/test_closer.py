"""``closer``: expert, with May I? in contract's round of three groups and the last place of
a dead round's table kept; legal, reproducible, expert's games where neither rule applies."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots.base import Situation
from clients.bots.closer import (
    AnyDangerBot,
    CloserBot,
    JokerHomeBot,
    JokerSpotBot,
    LayoutBot,
    SwapGainBot,
    SwapNeverBot,
    fills_table,
)
from clients.bots.expert import ExpertBot
from clients.bots.greedy import missing
from clients.bots.outs import ClosedLowBot, OutsBot3, can_go_out
from clients.bots.racer import RacerBot
from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    LayOff,
    PassClaim,
    SwapJoker,
)
from engine.cards import Card, cards_from_codes
from engine.melds import End, Meld, build_meld
from engine.rulesets import CONTRACT, WHISKERTRAIL, MeldKind, RuleSet
from tests.support import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.playouts import bot_moves, legal_game


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI])
def test_closer_only_picks_legal_actions(rules: RuleSet) -> None:
    names = ["closer"] * rules.max_players
    assert legal_game(rules, names, f"closer/{rules.name}".encode(), random.Random(0)) > 0


def test_closer_is_deterministic_for_a_seed() -> None:
    fours = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[:4])
    assert bot_moves(fours, 4, CloserBot, b"closer:1") == bot_moves(
        fours, 4, CloserBot, b"closer:1"
    )


@pytest.mark.parametrize(
    ("seats", "bot", "same"), [(2, CloserBot, ExpertBot), (4, AnyDangerBot, RacerBot)]
)
def test_closer_plays_experts_or_racers_games_at_whiskertrail(
    seats: int, bot: type[ExpertBot], same: type[ExpertBot]
) -> None:
    """At two seats the next seat is the only one that can have laid the table's melds
    while this one is closed: the next-seat danger is expert's."""
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    seed = f"closer:w{seats}".encode()
    assert bot_moves(short, seats, bot, seed) == bot_moves(short, seats, same, seed)


def test_closer_plays_otherwise_at_four_whiskertrail_seats() -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    assert bot_moves(short, 4, CloserBot, b"closer:w4") != bot_moves(
        short, 4, RacerBot, b"closer:w4"
    )


def test_closer_plays_otherwise_in_contracts_round_of_three_groups() -> None:
    groups = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[3:4])  # 3 groups
    seeds = [f"closer:g{i}".encode() for i in range(3)]
    assert any(
        bot_moves(groups, 4, CloserBot, s) != bot_moves(groups, 4, ExpertBot, s) for s in seeds
    )


def _hand(codes: list[str]) -> tuple[Card, ...]:
    return tuple(sorted(cards_from_codes(codes), key=lambda c: c.id))


def _claim_situation(round_number: int, top: str) -> Situation:
    # closed, two of the three groups short of a card each: 8s and kings
    hand = _hand(["5C", "5D", "5H", "8C", "8D", "KC", "KD", "2S", "4H", "7S", "9D", "JH"])
    return Situation(
        CONTRACT, round_number, 0, "claim", hand, False, (), cards_from_codes([top])[0], None,
        4, 1, (12, 12, 12, 12), (False,) * 4, (0,) * 4, 3, 50, False, 0, 6,
    )  # fmt: skip


def _choose(bot: ExpertBot, sit: Situation, legal: list[Action]) -> Action:
    bot.setup(sit.rules, sit.seat)
    return bot.choose(sit, legal, random.Random(0))


def test_closer_claims_in_the_round_of_three_groups_and_expert_does_not() -> None:
    sit = _claim_situation(4, "8S")
    top = sit.discard_top
    assert top is not None and missing((*sit.hand, top), sit) < missing(sit.hand, sit)
    legal: list[Action] = [Claim(), PassClaim()]
    assert _choose(CloserBot(1), sit, legal) == Claim()
    assert _choose(ExpertBot(1), sit, legal) == PassClaim()
    # a card that does not help: no claim
    assert _choose(CloserBot(1), _claim_situation(4, "3C"), legal) == PassClaim()


def test_closer_keeps_experts_pass_in_the_round_of_two_groups() -> None:
    sit = _claim_situation(1, "8S")  # round 1: two groups, and the 8 would make one
    legal: list[Action] = [Claim(), PassClaim()]
    assert _choose(CloserBot(1), sit, legal) == PassClaim()


def _set(codes: list[str], owner: int) -> Meld:
    return build_meld(MeldKind.SET, cards_from_codes(codes), CONTRACT).with_owner(owner)


def _last_place(hand_codes: list[str]) -> tuple[Situation, list[Action]]:
    # round 1, everybody open; the 9s are full, the 5s take one more card: this seat's 5H
    table = (_set(["5C", "5D", "5S"], 1), _set(["9C", "9D", "9H", "9S"], 2))
    hand = _hand(hand_codes)
    sit = Situation(
        CONTRACT, 1, 0, "play", hand, True, table, None, None,
        4, 0, (len(hand), 3, 2, 4), (True,) * 4, (0,) * 4, 10, 30, False, 0, 40,
    )  # fmt: skip
    five = next(c for c in hand if c.code == "5H")
    legal: list[Action] = [LayOff(five.id, 0, None), *(Discard(c.id) for c in hand)]
    return sit, legal


def test_closer_keeps_the_last_place_while_a_costlier_card_can_go() -> None:
    sit, legal = _last_place(["5H", "KS"])
    lay = legal[0]
    assert isinstance(lay, LayOff) and fills_table(sit, lay)
    assert _choose(ExpertBot(1), sit, legal) == lay  # the round would end: KS held
    king = next(c for c in sit.hand if c.code == "KS")
    assert _choose(CloserBot(1), sit, legal) == Discard(king.id)


def test_closer_fills_the_last_place_when_nothing_costlier_can_go() -> None:
    sit, legal = _last_place(["5H", "2S"])
    assert _choose(CloserBot(1), sit, legal) == legal[0]
    # a seat still closed: the round cannot end dead, so expert's lay-off
    sit, legal = _last_place(["5H", "KS"])
    sit = sit._replace(opened_seats=(True, True, False, True))
    assert _choose(CloserBot(1), sit, legal) == legal[0]


@pytest.mark.parametrize("bot", [JokerSpotBot, LayoutBot])
def test_the_lay_down_variants_play_whole_games(bot: type[CloserBot]) -> None:
    """They name their layout (an explicit LayContract, not the listed automatic one):
    the engine accepts every one (bot_moves applies each move, refusing illegal ones)."""
    runs = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[5:7])
    assert bot_moves(runs, 4, bot, b"closer:lay")


def _run(codes: list[str], owner: int, rules: RuleSet = CONTRACT) -> Meld:
    return build_meld(MeldKind.RUN, cards_from_codes(codes), rules).with_owner(owner)


def test_swap_gain_keeps_a_joker_on_the_table_that_does_not_lower_missing() -> None:
    # round 7 (three runs, no discards): a hand far from them; a 6H swaps the table's joker
    table = (_run(["4H", "5H", "JK", "7H"], 1),)
    hand = _hand(["6H", "2C", "9C", "KC", "3D", "8D", "QD", "4S", "TS", "AS", "7C", "JD"])
    sit = Situation(
        CONTRACT, 7, 0, "play", hand, False, table, None, None,
        4, 0, (12, 8, 13, 13), (False, True, False, False), (0,) * 4, 0, 40, False, 0, 20,
    )  # fmt: skip
    six = next(c for c in hand if c.code == "6H")
    legal: list[Action] = [SwapJoker(six.id, 0), EndTurn()]
    assert _choose(CloserBot(1), sit, legal) == legal[0]  # expert's (greedy's) swap
    assert _choose(SwapGainBot(1), sit, legal) == EndTurn()
    assert _choose(SwapNeverBot(1), sit, legal) == EndTurn()


def test_can_go_out_chains_lay_offs_and_melds_the_rest() -> None:
    table = [_run(["5H", "6H", "7H", "8H"], 1, WHISKERTRAIL)]
    assert can_go_out(_hand(["9H", "TH"]), table, WHISKERTRAIL)  # 9H opens the way for TH
    assert can_go_out(_hand(["9H", "TH", "KS"]), table, WHISKERTRAIL)  # KS: the discard
    assert not can_go_out(_hand(["9H", "KS", "2C"]), table, WHISKERTRAIL)
    assert can_go_out(_hand(["KS", "KD", "KC", "2C"]), table, WHISKERTRAIL)  # an extra set


def test_outs_keeps_a_pair_that_a_draw_would_meld() -> None:
    # open, whiskertrail, nothing fits the table: expert sheds a king, outs3 the two
    table = (_run(["5H", "6H", "7H", "8H"], 1, WHISKERTRAIL),)
    hand = _hand(["KS", "KD", "2C"])
    sit = Situation(
        WHISKERTRAIL, 2, 0, "play", hand, True, table, None, None,
        2, 0, (3, 6), (True, True), (0, 0), 4, 40, False, 0, 20,
    )  # fmt: skip
    legal: list[Action] = [Discard(c.id) for c in hand]
    two = next(c for c in hand if c.code == "2C")
    assert _choose(ExpertBot(1), sit, legal) != Discard(two.id)
    assert _choose(OutsBot3(1), sit, legal) == Discard(two.id)


def test_closed_low_takes_a_cheap_pile_card_once_an_opponent_is_open() -> None:
    hand = _hand(["KS", "QD", "9C", "7H", "5S", "JD", "4C", "8S", "TD", "6H"])
    top = cards_from_codes(["2C"])[0]

    def situation(opened: tuple[bool, bool]) -> Situation:
        return Situation(
            WHISKERTRAIL, 2, 0, "draw", hand, False, (), top, None,
            2, 0, (10, 5), opened, (0, 0), 4, 40, False, 0, 20,
        )  # fmt: skip

    legal: list[Action] = [Draw(DrawSource.STOCK), Draw(DrawSource.DISCARD)]
    race = situation((False, True))
    assert _choose(ExpertBot(1), race, legal) == Draw(DrawSource.STOCK)
    assert _choose(ClosedLowBot(1), race, legal) == Draw(DrawSource.DISCARD)
    assert _choose(ClosedLowBot(1), situation((False, False)), legal) == Draw(DrawSource.STOCK)


@pytest.mark.parametrize("bot", [OutsBot3, ClosedLowBot])
def test_the_whiskertrail_variants_play_legal_reproducible_games(bot: type[CloserBot]) -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    assert bot_moves(short, 4, bot, b"closer:w") == bot_moves(short, 4, bot, b"closer:w")


def test_joker_home_lays_a_joker_off_where_nobody_can_swap_it() -> None:
    table = (_run(["6H", "7H", "8H", "9H"], 1), _set(["5C", "5D", "5S"], 2))
    hand = _hand(["JK", "2C", "KD"])
    sit = Situation(
        CONTRACT, 2, 0, "play", hand, True, table, None, None,
        4, 0, (3, 5, 6, 9), (True, True, True, False), (0,) * 4, 8, 40, False, 0, 30,
    )  # fmt: skip
    joker = next(c for c in hand if c.is_joker)
    legal: list[Action] = [
        LayOff(joker.id, 0, End.LOW),
        LayOff(joker.id, 0, End.HIGH),
        LayOff(joker.id, 1, None),
        *(Discard(c.id) for c in hand),
    ]
    assert _choose(CloserBot(1), sit, legal) == legal[0]  # expert's: the first listed
    assert _choose(JokerHomeBot(1), sit, legal) == legal[2]  # the group: never swapped
