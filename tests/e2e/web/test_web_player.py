"""The web match's prompt player (tests/e2e/web/player.py) keeps what helps its contract."""

from __future__ import annotations

from tests.e2e.web.player import pick, usefulness


def codes_picked(hand: str, contract: str, *, opened: bool = False) -> str:
    codes = hand.split()
    index = pick(codes, [True] * len(codes), contract, opened)
    assert index is not None
    return codes[index]


def test_groups_keep_pairs_and_drop_the_dearest_lone_card() -> None:
    hand = "7H 7S 9D 9C 9S KD 2C JK 4H 5H"
    assert codes_picked(hand, "Round 1 of 7: 2 groups") == "KD"


def test_sequences_keep_neighbours() -> None:
    hand = "4H 5H 6H 8S 9S KD KC 2C"
    # (the kings pair up, but this round asks for sequences only)
    assert codes_picked(hand, "Round 3 of 7: 2 sequences") == "KD"
    assert codes_picked("4H 5H 6H KD 9C", "Round 3 of 7: 2 sequences") == "KD"


def test_an_ace_is_next_to_a_two_and_a_king() -> None:
    assert usefulness("AH", ["KH"], groups=False, runs=True) == 2.0
    assert usefulness("AH", ["2H"], groups=False, runs=True) == 2.0
    assert usefulness("AH", ["AS", "AD"], groups=True, runs=False) == 4.0


def test_jokers_are_kept_until_the_contract_is_laid_then_the_dearest_card_goes() -> None:
    assert codes_picked("JK 3C 8D", "Round 1 of 7: 2 groups") == "8D"
    # (laid: a joker still held fitted no meld's lay-off, and costs 15)
    assert codes_picked("JK 3C 3D", "Round 1 of 7: 2 groups", opened=True) == "JK"
    assert codes_picked("7C 3D QS", "Round 1 of 7: 2 groups", opened=True) == "QS"
    assert pick(["JK", "7C"], [False, False], "2 groups", opened=False) is None
