"""The dead round (docs/RULES.md, rule 6): a `contract` round in which every seat has
laid its contract and every meld on the table is full ends at once, nobody out,
scored as a dry stock is.  Positions: tests/support/scenarios.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from engine.actions import Discard, LayContract, LayOff, SwapJoker
from engine.cards import cards_from_codes, full_deck
from engine.errors import InvalidActionError
from engine.events import EventType
from engine.game import GameState, Phase
from engine.melds import build_meld, is_full, layoff_ends
from engine.rulesets import CONTRACT, WHISKERTRAIL, MeldKind, RuleSet
from tests.support.scenarios import (
    C,
    TableEntry,
    build,
    cid,
    event,
    penalty,
    play_events,
    types_of,
)

#: the `contract` preset as it was before the rule: the valve alone ends such a round
NO_DEAD = dataclasses.replace(CONTRACT, name="contract-no-dead", dead_round_ends=False)

# round 1 (2 groups): every seat open with two groups; seat 0's first one holds three
FULL_BUT_ONE: list[TableEntry] = [
    (0, "set", ["7C", "7D", "7H"]),
    (0, "set", ["8C", "8D", "8H", "8S"]),
    (1, "set", ["9C", "9D", "9H", "9S"]),
    (1, "set", ["TC", "TD", "TH", "TS"]),
    (2, "set", ["JC", "JD", "JH", "JS"]),
    (2, "set", ["QC", "QD", "QH", "QS"]),
    (3, "set", ["KC", "KD", "KH", "KS"]),
    (3, "set", ["2C", "2D", "2H", "2S"]),
]
OTHERS = [["3D", "4D"], ["5S"], ["6C", "AC", "AD"]]


def _round_one(
    seat0: Sequence[str], table: Sequence[TableEntry] = FULL_BUT_ONE, rules: RuleSet = C
) -> GameState:
    return build(rules, [list(seat0), *OTHERS], table=table)


def test_the_lay_off_that_fills_the_last_meld_ends_the_round_at_once_as_a_dry_stock() -> None:
    state = _round_one(["7S", "5D", "3C"])
    assert not state.round_is_dead()
    out, events = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))
    assert types_of(events)[:2] == ["laid_off", "round_ended"]
    ended = event(events, EventType.ROUND_ENDED)
    # nobody out: every hand scored as it stands, seat 0's before any discard
    assert (ended.seat, ended.public["reason"]) == (None, "dead")
    expected = [penalty(C, ["5D", "3C"]), *(penalty(C, h) for h in OTHERS)]
    assert ended.public["penalties"] == expected == [8, 7, 5, 36]
    assert out.round_number == 2 and out.scores == tuple(expected)
    assert out.phase is Phase.DRAW and out.table == () and not any(out.opened)
    assert "round_started" in types_of(events)


def test_a_round_where_a_lay_off_is_still_possible_goes_on() -> None:
    table = [*FULL_BUT_ONE[:-1], (3, "set", ["2C", "2D", "2H"])]  # two groups of three
    state = _round_one(["7S", "5D", "3C"], table)
    nxt, events = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))
    assert "round_ended" not in types_of(events)
    assert nxt.round_number == 1 and nxt.phase is Phase.PLAY and not nxt.round_is_dead()
    # the discard and the turns after it go on as usual: a claim window opens
    nxt, events = play_events(nxt, 0, Discard(cid(nxt, 0, "5D")))
    assert nxt.round_number == 1 and nxt.phase is Phase.CLAIM


def test_a_round_is_not_dead_while_a_seat_has_not_laid_its_contract() -> None:
    hands = [
        ["7S", "5D"],
        ["3D", "4D"],
        ["5S"],
        ["KC", "KD", "KH", "KS", "2C", "2D", "2H", "2S", "9H"],
    ]
    state = build(C, hands, table=FULL_BUT_ONE[:6])
    state = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))[0]
    assert state.round_number == 1 and state.opened == (True, True, True, False)
    assert all(is_full(m, C) for m in state.table) and not state.round_is_dead()
    # seat 3 lays its contract: two groups of four, every meld full: dead at once, the
    # turn's discard never made
    state = dataclasses.replace(state, current=3)
    out, events = play_events(state, 3, LayContract())
    laid = event(events, EventType.LAID_CONTRACT).public["melds"]
    assert [len(m["cards"]) for m in laid] == [4, 4]
    ended = event(events, EventType.ROUND_ENDED)
    assert ended.public["reason"] == "dead"
    assert ended.public["penalties"] == [5, 7, 5, 9]
    assert out.round_number == 2


def test_a_lay_off_that_fills_the_table_and_empties_the_hand_is_a_going_out() -> None:
    state = _round_one(["7S"])
    _, events = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["reason"]) == (0, "went_out")
    assert ended.public["penalties"][0] == 0


def test_a_joker_laid_off_fills_a_group_too() -> None:
    state = _round_one(["JK", "5D"])
    _, events = play_events(state, 0, LayOff(cid(state, 0, "JK"), 0))
    assert event(events, EventType.ROUND_ENDED).public["reason"] == "dead"


# round 2 (1 group + 1 sequence): full runs of 13, jokers among them
RUNS_AND_GROUPS: list[TableEntry] = [
    (0, "set", ["7C", "7D", "7H"]),
    (0, "run", ["AH", "2H", "3H", "4H", "JK", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"]),
    (1, "set", ["9C", "9D", "JK", "9S"]),
    (1, "run", ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"]),
    (2, "set", ["JC", "JD", "JH", "JS"]),
    (2, "run", ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD"]),
    (3, "set", ["KC", "KD", "KH", "KS"]),
    (3, "run", ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"]),
]


def _round_two(seat0: Sequence[str], table: Sequence[TableEntry], rules: RuleSet = C) -> GameState:
    return build(rules, [list(seat0), ["3D"], ["5S"], ["6C"]], table=table, round_number=2)


def test_full_runs_with_jokers_and_high_aces_make_a_dead_round() -> None:
    state = _round_two(["7S", "4H"], RUNS_AND_GROUPS)
    assert [len(m.cards) for m in state.table[1::2]] == [13] * 4
    out, events = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))
    assert event(events, EventType.ROUND_ENDED).public["reason"] == "dead"
    assert out.round_number == 3


def test_a_run_one_card_short_keeps_the_round_alive_and_a_swap_ends_nothing() -> None:
    table = list(RUNS_AND_GROUPS)
    table[5] = (2, "run", ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD"])
    state = _round_two(["7S", "5H", "AD"], table)
    state = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))[0]
    assert state.round_number == 1 + 1 and not state.round_is_dead()
    # a swap of a full run's joker leaves every meld's size as it was
    state, events = play_events(state, 0, SwapJoker(cid(state, 0, "5H"), 1))
    assert "round_ended" not in types_of(events) and state.round_number == 2
    # the ace fills the last run (at either end it fits): dead, the swapped joker scored
    out, events = play_events(state, 0, LayOff(cid(state, 0, "AD"), 5))
    ended = event(events, EventType.ROUND_ENDED)
    assert ended.public["reason"] == "dead" and ended.public["penalties"][0] == 15
    assert out.round_number == 3


def test_without_the_rule_a_dead_round_goes_on_to_the_valve() -> None:
    state = _round_one(["7S", "5D", "3C"], rules=NO_DEAD)
    nxt, events = play_events(state, 0, LayOff(cid(state, 0, "7S"), 0))
    assert "round_ended" not in types_of(events) and nxt.round_number == 1
    assert not nxt.round_is_dead()


# ---------------------------------------------------------------- what "full" means

JK = "JK"


@pytest.mark.parametrize(
    ("kind", "codes", "full"),
    [
        (MeldKind.SET, ["7C", "7D", "7H", "7S"], True),
        (MeldKind.SET, ["7C", "7D", JK, "7S"], True),
        (MeldKind.SET, ["7C", JK, JK, "7S"], True),
        (MeldKind.SET, ["7C", "7D", "7H"], False),
        (MeldKind.SET, ["7C", "7D", JK], False),
        (
            MeldKind.RUN,
            ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"],
            True,
        ),
        (
            MeldKind.RUN,
            ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"],
            True,
        ),
        (
            MeldKind.RUN,
            ["2H", JK, "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", JK, "KH", "AH"],
            True,
        ),
        (
            MeldKind.RUN,
            ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"],
            False,
        ),
        (
            MeldKind.RUN,
            ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH"],
            False,
        ),
        (MeldKind.RUN, ["JH", "QH", "KH", "AH"], False),
        (MeldKind.RUN, ["AH", "2H", "3H", "4H"], False),
    ],
)
def test_a_full_meld_is_one_no_card_of_the_deck_can_be_laid_off_on(
    kind: MeldKind, codes: list[str], full: bool
) -> None:
    """``is_full`` by sizes agrees with trying every card of the deck on the meld."""
    meld = build_meld(kind, cards_from_codes(codes, C.decks, C.jokers), C).with_owner(0)
    assert is_full(meld, C) is full
    fits = [c.code for c in full_deck(C.decks, C.jokers) if layoff_ends(meld, c, C)]
    assert (fits == []) is full, fits


def test_whiskertrail_sets_are_never_full() -> None:
    codes = ["7C", "7D", "7H", "7S", "7C", "7D", "7H", "7S"]
    meld = build_meld(MeldKind.SET, cards_from_codes(codes, 2, 4), WHISKERTRAIL).with_owner(0)
    assert not is_full(meld, WHISKERTRAIL)


# ---------------------------------------------------------------- the rule set's field


def test_contract_ends_dead_rounds_and_whiskertrail_has_none() -> None:
    assert CONTRACT.dead_round_ends is True
    assert WHISKERTRAIL.dead_round_ends is False


def test_the_rule_with_extra_melds_is_refused() -> None:
    with pytest.raises(InvalidActionError, match="dead_round_ends needs extra_melds false"):
        dataclasses.replace(CONTRACT, extra_melds=True)
    with pytest.raises(InvalidActionError, match="dead_round_ends must be true or false"):
        dataclasses.replace(CONTRACT, dead_round_ends="yes")  # type: ignore[arg-type]


#: the presets' hashes before the rule (docs/API.md, "Changes in 0.3.0")
CONTRACT_HASH_BEFORE = "e962363f8408608b"
WHISKERTRAIL_HASH = "8001fc569708ea52"


def test_a_rule_set_without_the_rule_keeps_the_form_and_hash_it_had_before() -> None:
    plain = NO_DEAD.to_dict()
    assert "dead_round_ends" not in plain
    assert "dead_round_ends" in CONTRACT.to_dict()
    assert RuleSet.from_dict(plain) == NO_DEAD
    before = dataclasses.replace(NO_DEAD, name="contract")
    assert before.hash == CONTRACT_HASH_BEFORE != CONTRACT.hash
    assert WHISKERTRAIL.hash == WHISKERTRAIL_HASH
