"""``best_selections_without``'s one branch and bound (engine/solver/best_search.py)
answers, for every type, exactly what ``best_selection`` of the hand less every copy of
that type answers: the same Selection (melds, cards, points, jokers), over thousands of
random hands of every round of both rule sets, for the types the solver's own layout
uses (the training environment's case) and for random types held or not, the joker
among them."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest

from clients.training.actions import JOKER_TYPE, card_type
from engine.cards import Card, full_deck
from engine.rulesets import RuleSet, ruleset
from engine.solver import JOKER_TYPE as SOLVER_JOKER_TYPE
from engine.solver import best_selection, best_selections_without


def _deals(
    rules: RuleSet, seed: int, count: int, pick: int
) -> Iterator[tuple[int, list[Card], random.Random]]:
    """``count`` hands, every round in turn: from the whole deck (``pick`` 0), or from
    a few ranks and suits with every copy of them and the jokers (ties decided by ids
    and the split: twins, equal points, spare jokers)."""
    rng = random.Random(seed)
    deck = list(full_deck(rules.decks, rules.jokers))
    rounds = len(rules.contracts)
    for i in range(count):
        pool = deck
        if pick:
            ranks = set(rng.sample(range(1, 14), rng.randrange(4, 9)))
            suits = set(rng.sample(range(4), rng.randrange(1, 5)))
            pool = [c for c in deck if c.rank == 0 or (c.rank in ranks and c.suit in suits)]
        size = min(len(pool), rng.randrange(8, 35))
        yield i % rounds + 1, rng.sample(pool, size), rng


def _check(hand: Sequence[Card], rules: RuleSet, round_number: int, types: list[int]) -> int:
    """The answers against best_selection of the hand less each type; how many lay."""
    auto = best_selection(hand, rules, round_number)
    if auto is not None:
        types = types + sorted({card_type(c) for m in auto.melds for c in m.cards})
    got = best_selections_without(hand, rules, round_number, types)
    assert len(got) == len(types)
    found = 0
    for t, answer in zip(types, got, strict=True):
        rest = [c for c in hand if card_type(c) != t]
        assert answer == best_selection(rest, rules, round_number), (hand, round_number, t)
        found += answer is not None
    return found


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_every_round_the_tree_answers_each_search(rule_set: str) -> None:
    assert SOLVER_JOKER_TYPE == JOKER_TYPE
    rules = ruleset(rule_set)
    found = searched = 0
    for round_number, hand, rng in _deals(rules, 41, 3000, 0):
        types = rng.sample(range(JOKER_TYPE + 1), 2)
        found += _check(hand, rules, round_number, types)
        searched += 1
    assert found > 4000 and searched == 3000


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_hands_rich_in_copies_and_jokers(rule_set: str) -> None:
    rules = ruleset(rule_set)
    found = 0
    for round_number, hand, rng in _deals(rules, 43, 1500, 1):
        found += _check(hand, rules, round_number, [JOKER_TYPE, rng.randrange(JOKER_TYPE)])
    assert found > 1500
