"""Meld validation, joker placement, lay-offs and swaps (engine/melds.py)."""

from __future__ import annotations

import json

import pytest

from engine.cards import Card, cards_from_codes, full_deck
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.melds import (
    End,
    Meld,
    build_run,
    build_set,
    lay_off,
    layoff_ends,
    meld_from_dict,
    meld_to_dict,
    swap_joker,
)
from engine.rulesets import CONTRACT, WHISKERTRAIL, MeldKind, RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb


def cs(*codes: str) -> list[Card]:
    return cards_from_codes(codes)


def test_joker_takes_the_lowest_start() -> None:
    run = build_run(cs("5H", "6H", "7H", "JK"), WHISKERTRAIL)
    assert (run.rank, run.high) == (4, 7)
    assert run.cards[0].is_joker
    # at the bottom there is no room below the ace: the joker goes on top
    run = build_run(cs("AH", "2H", "3H", "JK"), WHISKERTRAIL)
    assert (run.rank, run.high) == (1, 4) and run.cards[-1].is_joker


def test_contract_player_may_name_the_start() -> None:
    run = build_run(cs("5H", "6H", "7H", "JK"), CONTRACT, start=5)
    assert (run.rank, run.high) == (5, 8)
    with pytest.raises(IllegalActionError):
        build_run(cs("5H", "6H", "7H", "JK"), CONTRACT, start=6)


def test_aces() -> None:
    assert build_run(cs("AS", "2S", "3S", "4S"), WHISKERTRAIL).rank == 1
    with pytest.raises(IllegalActionError):
        build_run(cs("JS", "QS", "KS", "AS"), WHISKERTRAIL)
    high = build_run(cs("AS", "JS", "QS", "KS"), CONTRACT)
    assert (high.rank, high.high) == (11, 14)
    with pytest.raises(IllegalActionError):
        build_run(cs("QS", "KS", "AS", "2S"), CONTRACT)  # K-A-2 never wraps


def test_run_validation_catches_classic_traps() -> None:
    with pytest.raises(IllegalActionError):  # J♠ Q♠ K♠ A♣ are not consecutive
        build_run(cs("JS", "QS", "KS", "AC"), CONTRACT)
    fourteen = cs(
        "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "JK"
    )
    with pytest.raises(IllegalActionError):  # never longer than A..K
        build_run(fourteen, CONTRACT)
    with pytest.raises(IllegalActionError):  # twins cannot both sit in one run
        build_run(cs("5S", "5S", "6S", "7S"), CONTRACT)


def test_sets() -> None:
    assert len(build_set(cs("8S", "8S", "8H"), WHISKERTRAIL).cards) == 3
    with pytest.raises(IllegalActionError):
        build_set(cs("8S", "8S", "8H"), CONTRACT)  # distinct suits in contract
    with pytest.raises(IllegalActionError):
        build_set(cs("8S", "8D", "8H", "8C", "JK"), CONTRACT)  # at most 4
    with pytest.raises(IllegalActionError):
        build_set(cs("8S", "JK", "JK"), CONTRACT)  # two naturals at least
    with pytest.raises(IllegalActionError):
        build_set(cs("8S", "8D", "JK", "JK"), WHISKERTRAIL)  # one joker at most
    with pytest.raises(IllegalActionError):
        build_set(cs("8S", "8D", "8H", "8C"), WHISKERTRAIL, size=3)  # exact contract size


def test_layoff_ends_move() -> None:
    run = build_run(cs("5S", "6S", "7S", "8S"), WHISKERTRAIL)
    run = lay_off(run, cs("9S")[0], WHISKERTRAIL)
    run = lay_off(run, cs("TS")[0], WHISKERTRAIL)
    assert run.high == 10
    run = lay_off(run, cs("4S")[0], WHISKERTRAIL)
    assert run.rank == 4
    with pytest.raises(IllegalActionError) as err:
        lay_off(run, cs("8S")[0], WHISKERTRAIL)
    assert err.value.reason is Reason.LAYOFF_DOES_NOT_FIT


def test_natural_never_takes_a_jokers_place_and_contract_swaps_instead() -> None:
    joker = cs("JK")[0]
    run = build_run([*cs("5S", "6S", "7S"), joker], CONTRACT, start=5)  # joker is 8♠
    eight = cs("8S")[0]
    with pytest.raises(IllegalActionError) as err:
        lay_off(run, eight, CONTRACT)
    assert err.value.reason is Reason.POSITION_HELD_BY_JOKER
    swapped, freed = swap_joker(run, eight, CONTRACT)
    assert freed is joker and swapped.cards[-1] is eight
    assert swapped.jokers == 0 and (swapped.rank, swapped.high) == (5, 8)


def test_jokers_in_sets_are_never_swapped_and_whiskertrail_never_swaps() -> None:
    group = build_set(cs("8S", "8D", "JK"), CONTRACT)
    with pytest.raises(IllegalActionError) as err:
        swap_joker(group, cs("8H")[0], CONTRACT)
    assert err.value.reason is Reason.SWAP_NOT_ALLOWED
    run = build_run(cs("5S", "6S", "7S", "JK"), WHISKERTRAIL)
    with pytest.raises(IllegalActionError):
        swap_joker(run, cs("4S")[0], WHISKERTRAIL)


def test_joker_layoff_defaults_high_and_respects_rules() -> None:
    joker = cs("JK")[0]
    run = build_run(cs("5S", "6S", "7S", "8S"), CONTRACT)
    assert lay_off(run, joker, CONTRACT).high == 9
    assert lay_off(run, joker, CONTRACT, End.LOW).rank == 4
    top = build_run(cs("JS", "QS", "KS", "AS"), CONTRACT)
    assert lay_off(top, joker, CONTRACT).rank == 10  # no room above a high ace
    with pytest.raises(IllegalActionError) as err:
        lay_off(run, joker, WHISKERTRAIL)
    assert err.value.reason is Reason.LAYOFF_JOKER_NOT_ALLOWED


def test_contract_group_layoff_needs_a_new_suit_and_room() -> None:
    group = build_set(cs("8S", "8D", "8H"), CONTRACT)
    with pytest.raises(IllegalActionError):
        lay_off(group, cs("8S")[0], CONTRACT)
    full = lay_off(group, cs("8C")[0], CONTRACT)
    with pytest.raises(IllegalActionError):
        lay_off(full, cs("JK")[0], CONTRACT)
    # whiskertrail sets have no upper size and allow twins
    wset = build_set(cs("8S", "8D", "8H"), WHISKERTRAIL)
    assert len(lay_off(wset, cs("8S", "8S")[1], WHISKERTRAIL).cards) == 4


def _melds(rules: RuleSet) -> list[Meld]:
    runs = [
        ("2S", "3S", "4S", "5S"),
        ("AS", "2S", "3S", "4S"),
        ("2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"),
        ("5D", "6D", "JK", "8D"),
        ("JC", "QC", "KC", "JK"),
    ]
    sets = [("8S", "8D", "8H"), ("8S", "8D", "JK"), ("8S", "8D", "8H", "8C")]
    melds = []
    for codes in runs:
        try:
            melds.append(build_run(cs(*codes), rules))
        except IllegalActionError:
            continue
    for codes in sets:
        try:
            melds.append(build_set(cs(*codes), rules))
        except IllegalActionError:
            continue
    return melds


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT], ids=lambda r: r.name)
def test_layoff_ends_are_exactly_the_ends_lay_off_accepts(rules: RuleSet) -> None:
    for meld in _melds(rules):
        for c in full_deck(rules.decks, rules.jokers):
            accepted = []
            for end in (None, End.LOW, End.HIGH):
                if meld.kind is MeldKind.SET and end is not None:
                    continue
                try:
                    accepted.append((end, lay_off(meld, c, rules, end)))
                except IllegalActionError:
                    continue
            listed = layoff_ends(meld, c, rules)
            assert bool(listed) == bool(accepted), (meld.describe(), c.code)
            ways = {grown for _, grown in accepted}
            for end in listed:
                assert lay_off(meld, c, rules, end) in ways
            # one listed form per distinct way the meld can grow
            assert len(listed) == len(ways), (meld.describe(), c.code, listed)


def test_meld_forms_round_trip() -> None:
    for rules in (WHISKERTRAIL, CONTRACT):
        for meld in _melds(rules):
            owned = meld.with_owner(1)
            stored = json.loads(json.dumps(meld_to_dict(owned)))
            assert meld_from_dict(stored, rules, 2, "table[0]") == owned
            message = pb.Meld()
            convert.fill_meld(message, owned, 3)  # the view's form, which clients read
            assert convert.meld_from_pb(message, rules.decks) == owned


def test_meld_from_dict_validates() -> None:
    run = meld_to_dict(build_run(cs("5D", "6D", "JK", "8D"), WHISKERTRAIL).with_owner(0))
    with pytest.raises(InvalidActionError, match=r"table\[2\] is not a valid run"):
        meld_from_dict({**run, "cards": list(reversed(run["cards"]))}, WHISKERTRAIL, 2, "table[2]")
    with pytest.raises(InvalidActionError, match="owner"):
        meld_from_dict({**run, "owner": 2}, WHISKERTRAIL, 2, "table[0]")
