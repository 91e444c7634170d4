"""``best_selections_without``'s one branch and bound (engine/solver/without_search.py)
answers, for every type, exactly what ``best_selection`` of the hand less every copy of
that type answers: the same Selection (melds, cards, points, jokers), over thousands of
random hands of every round of both rule sets, for the types the solver's own layout
uses (the training environment's case) and for random types held or not."""

from __future__ import annotations

import random

import pytest

from clients.training.actions import JOKER_TYPE, card_type
from engine.cards import Card, full_deck
from engine.rulesets import RuleSet, ruleset
from engine.solver import best_selection, best_selections_without


def _check(hand: list[Card], rules: RuleSet, round_number: int, types: list[int]) -> int:
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
    rules = ruleset(rule_set)
    rng = random.Random(41)
    deck = list(full_deck(rules.decks, rules.jokers))
    searched = found = 0
    for round_number in range(1, len(rules.contracts) + 1):
        for _ in range(400):
            hand = rng.sample(deck, rng.randrange(8, 35))
            auto = best_selection(hand, rules, round_number)
            types = rng.sample(range(JOKER_TYPE + 1), 2)
            if auto is not None:
                types += sorted({card_type(c) for m in auto.melds for c in m.cards})
            found += _check(hand, rules, round_number, types)
            searched += len(types)
    assert found > 2000 and searched - found > 1000


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_hands_rich_in_copies_and_jokers(rule_set: str) -> None:
    """Ties decided by ids and the split: hands drawn from a few ranks and suits, with
    every copy of them and the jokers (twins, equal points, spare jokers)."""
    rules = ruleset(rule_set)
    rng = random.Random(43)
    deck = list(full_deck(rules.decks, rules.jokers))
    found = 0
    for _ in range(1200):
        round_number = rng.randrange(1, len(rules.contracts) + 1)
        ranks = set(rng.sample(range(1, 14), rng.randrange(4, 9)))
        suits = set(rng.sample(range(4), rng.randrange(1, 5)))
        pool = [c for c in deck if c.rank == 0 or (c.rank in ranks and c.suit in suits)]
        hand = rng.sample(pool, min(len(pool), rng.randrange(10, 31)))
        auto = best_selection(hand, rules, round_number)
        types = [JOKER_TYPE, *rng.sample(range(JOKER_TYPE), 2)]
        if auto is not None:
            types += sorted({card_type(c) for m in auto.melds for c in m.cards})
        found += _check(hand, rules, round_number, types)
    assert found > 1000
