"""Cards keep a physical identity; rule sets are validated data with a stable hash."""

from __future__ import annotations

import dataclasses

import pytest

from engine.cards import card, cards_from_codes, full_deck, kind_code, parse_code
from engine.errors import InvalidActionError
from engine.rulesets import CONTRACT, PRESETS, WHISKERTRAIL, RuleSet, ruleset

_ONE_SET: dict[str, object] = {
    "name": "one set",
    "melds": [{"kind": "set", "size": 3}],
    "deal": 10,
    "discards": True,
}


def test_twins_are_distinct_physical_cards() -> None:
    first, second = cards_from_codes(["7H", "7H"])
    assert first.kind == second.kind == (7, 2)
    assert first.id != second.id
    assert first != second
    assert (first.id, second.id) == (32, 84)


def test_kind_code_spells_every_card_of_a_kind() -> None:
    codes = {kind_code(c.rank, c.suit) for c in full_deck(2, 4)}
    assert len(codes) == 53 and "JK" in codes and "TD" in codes
    for c in full_deck(2, 4):
        assert kind_code(c.rank, c.suit) == c.code
        assert parse_code(kind_code(c.rank, c.suit)) == (c.rank, c.suit)


def test_codes_round_trip_and_are_lenient_in_case_and_ten() -> None:
    for code in ("AS", "TD", "7H", "KC", "JK"):
        assert cards_from_codes([code])[0].code == code
    assert parse_code("10h") == parse_code("TH")
    with pytest.raises(InvalidActionError):
        parse_code("1H")
    with pytest.raises(InvalidActionError):
        cards_from_codes(["7H", "7H", "7H"])
    with pytest.raises(InvalidActionError):
        cards_from_codes(["JK"] * 4, jokers=3)


def test_deck_sizes_and_interning() -> None:
    assert len(full_deck(2, 4)) == WHISKERTRAIL.deck_size == 108
    assert len(full_deck(2, 3)) == CONTRACT.deck_size == 107
    assert card(104) is card(104)
    assert card(104).is_joker and not card(103).is_joker
    with pytest.raises(InvalidActionError):
        card(108 + 16)


def test_penalties() -> None:
    for rules, joker in ((WHISKERTRAIL, 25), (CONTRACT, 15)):
        values = [
            rules.penalty(c) for c in cards_from_codes(["2C", "TC", "JD", "QH", "KS", "AS", "JK"])
        ]
        assert values == [2, 10, 10, 10, 10, 15, joker]


def test_presets_follow_the_route() -> None:
    assert [c.deal for c in WHISKERTRAIL.contracts] == [10, 10, 10, 11, 10, 10, 11, 12]
    assert [c.deal for c in CONTRACT.contracts] == [10, 10, 10, 12, 12, 12, 12]
    assert [c.discards for c in CONTRACT.contracts] == [True] * 6 + [False]
    assert WHISKERTRAIL.contract(8).name == "Wayfarers' Lodge"
    assert ruleset("contract") is CONTRACT
    with pytest.raises(InvalidActionError):
        ruleset("gin")
    with pytest.raises(InvalidActionError):
        WHISKERTRAIL.contract(9)


def test_hash_is_stable_and_tracks_every_field() -> None:
    again = RuleSet.from_dict(WHISKERTRAIL.to_dict())
    assert again == WHISKERTRAIL and again.hash == WHISKERTRAIL.hash
    assert WHISKERTRAIL.hash != CONTRACT.hash
    changed = dataclasses.replace(WHISKERTRAIL, turn_cap=150)
    assert changed.hash != WHISKERTRAIL.hash
    assert len({r.hash for r in PRESETS.values()}) == len(PRESETS)


@pytest.mark.parametrize(
    "change",
    [
        {"decks": 0},
        {"jokers": -1},
        {"min_players": 5},
        {"contracts": ()},
        {"set_min": 2},
        {"draw_from_discard": True, "may_i": True},
        {"set_distinct_suits": True, "set_max": None},
        # the limits (docs/API.md): every score must fit the stored int32
        {"joker_penalty": 4294967295},
        {"ace_penalty": 1001},
        {"face_penalty": -1},
        {"decks": 5},
        {"jokers": 17},
        {"max_players": 9},
        {"turn_cap": 0},
        {"turn_cap": 10_001},
        {"max_exhaustions": 0},
        {"claim_penalty_cards": 11},
        {"name": ""},
        {"name": "x" * 65},
        {"contracts": [_ONE_SET] * 33},
        {"stalemate": "dry", "turn_cap": None},
        # contracts no deal satisfies
        {"contracts": [_ONE_SET | {"deal": 2}]},
        {"min_naturals_per_meld": 4},
        {"contracts": [_ONE_SET | {"melds": [{"kind": "set", "size": 10}]}]},
        {"contracts": [_ONE_SET | {"melds": [{"kind": "run", "size": 14}], "deal": 14}]},
        {"contracts": [_ONE_SET | {"melds": []}]},
        {"contracts": [_ONE_SET | {"name": "c" * 65}]},
        # types a JSON file may get wrong
        {"may_i": "no"},
        {"ace_high": 1},
        {"decks": 2.0},
        {"decks": True},
        {"contracts": [_ONE_SET | {"discards": "false"}]},
        {"contracts": [_ONE_SET | {"deal": "10"}]},
    ],
)
def test_custom_rule_sets_are_validated(change: dict[str, object]) -> None:
    data = WHISKERTRAIL.to_dict() | change
    with pytest.raises(InvalidActionError) as refused:
        RuleSet.from_dict(data)
    assert len(str(refused.value)) < 300  # a bounded message, whatever the input


def test_the_limits_accept_their_edges() -> None:
    edges = {
        "joker_penalty": 1000,
        "ace_penalty": 1000,
        "face_penalty": 1000,
        "decks": 4,
        "jokers": 16,
        "max_players": 8,
        "turn_cap": 10_000,
        "contracts": [_ONE_SET | {"deal": 3}] * 32,
    }
    rules = RuleSet.from_dict(WHISKERTRAIL.to_dict() | edges)
    assert rules.rounds == 32 and rules.deck_size == 4 * 52 + 16
    assert rules.contracts[0].deal == rules.contracts[0].cards_required == 3


def test_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(InvalidActionError):
        RuleSet.from_dict(WHISKERTRAIL.to_dict() | {"wild_twos": True})
