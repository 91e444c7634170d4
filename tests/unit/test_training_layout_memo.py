"""The environment's candidate contract layouts from a seat's memo are those searched anew.

``LayoutMemo`` skips a solver search where an earlier one proves the answer: the
hand's live cards (``live_cards``: dead cards dropped) are a subset of a hand searched
before in the round, and hold that hand's answer.  Checked here against the plain
path (a ``best_selection`` per candidate on the whole hand): dead cards never change
the solver's answer, over thousands of random hands of every round of both rule sets;
the candidate lists equal the plain ones along thousands of random hand histories
(a card out, a card in, sometimes two in, as a seat's turns and May I? claims change
it), the memo answering a good share of them; and along random games the environment's
mask, indices and features equal those of a memo-less ``choices`` on a fresh state
(``tests/unit/test_training_layouts.py`` checks the same for 3 games a rule set)."""

from __future__ import annotations

import random

import pytest

from clients.training import raw_env
from clients.training.actions import LayoutMemo, Truncation, choices, contract_layouts, live_cards
from engine.cards import JOKER_RANK, Card, full_deck
from engine.game import Phase
from engine.rulesets import ruleset
from engine.solver import best_selection


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_dead_cards_never_change_the_solver_answer(rule_set: str) -> None:
    rules = ruleset(rule_set)
    rng = random.Random(11)
    deck = list(full_deck(rules.decks, rules.jokers))
    dropped = lays = 0
    for _ in range(4000):
        round_number = rng.randrange(1, len(rules.contracts) + 1)
        hand = rng.sample(deck, rng.randrange(6, 35))
        live = live_cards(hand, rules, round_number)
        assert [c for c in hand if c in live] == live  # a sub-list, in hand order
        assert all(c in live for c in hand if c.rank == JOKER_RANK)
        best = best_selection(hand, rules, round_number)
        assert best_selection(live, rules, round_number) == best
        dropped += len(hand) - len(live)
        lays += best is not None
    assert dropped > 4000 and lays > 400  # (both cases seen, many times)


def test_a_card_that_could_meld_is_kept() -> None:
    # the check can fail: a live card dropped would change the answer
    rules = ruleset("contract")
    by_code = {c.code: c for c in full_deck(rules.decks, rules.jokers) if c.id < 52}
    # 2 sequences (round 3): 4C 5C 6C 7C is a run; 9D alone is dead, 8C next to the run live
    hand = [by_code[k] for k in ("4C", "5C", "6C", "7C", "9D", "8C", "KS")]
    live = live_cards(hand, rules, 3)
    assert [c.code for c in live] == ["4C", "5C", "6C", "7C", "8C"]
    # 2 groups (round 1): a pair of distinct suits needs a joker for a set of 3
    pair = [by_code["4C"], by_code["4D"], by_code["9S"]]
    assert live_cards(pair, rules, 1) == []
    joker = next(c for c in full_deck(rules.decks, rules.jokers) if c.rank == JOKER_RANK)
    assert live_cards([*pair, joker], rules, 1) == [*pair[:2], joker]


def _histories(rule_set: str, seed: int, steps: int) -> list[tuple[list[Card], int]]:
    """Hands a seat might hold at its decisions, each the one before with a card out and
    one or two in (a draw, a claim's two), rounds chosen at random, some re-dealt."""
    rules = ruleset(rule_set)
    rng = random.Random(seed)
    deck = list(full_deck(rules.decks, rules.jokers))
    out: list[tuple[list[Card], int]] = []
    hand: list[Card] = []
    round_number = 1
    for _ in range(steps):
        if not hand or rng.random() < 0.03:
            round_number = rng.randrange(1, len(rules.contracts) + 1)
            hand = rng.sample(deck, rules.contract(round_number).deal + rng.randrange(0, 12))
        else:
            hand.pop(rng.randrange(len(hand)))
            rest = [c for c in deck if c not in hand]
            hand.extend(rng.sample(rest, 2 if rng.random() < 0.1 and len(hand) < 33 else 1))
        out.append((list(hand), round_number))
    return out


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_the_memo_gives_the_plain_candidates(rule_set: str) -> None:
    rules = ruleset(rule_set)
    memo = LayoutMemo()
    compared = 0
    for hand, round_number in _histories(rule_set, 3, 6000):
        auto = best_selection(hand, rules, round_number)
        if auto is None:
            continue
        assert contract_layouts(hand, rules, round_number, auto, memo) == contract_layouts(
            hand, rules, round_number, auto
        )
        compared += 1
    assert compared > 800
    assert memo.proved > memo.searched // 10  # (the memo answered a good share)


@pytest.mark.parametrize("seed", [21, 22])
def test_the_environment_with_memos_masks_what_fresh_choices_give(seed: int) -> None:
    e = raw_env(rule_set="contract", seats=4, seed=seed)
    rng = random.Random(seed)
    compared = layable = 0
    for _ in range(3):
        e.reset()
        while not all(e.terminations.values()):
            agent = e.agent_selection
            game = e.game
            seat = game.to_act[0]
            if game.phase is Phase.PLAY and not game.opened[seat]:
                plain = choices(
                    e.action_layout,
                    game.legal_actions(seat),
                    game.hands[seat],
                    e.rules,
                    game.round_number,
                    game.blocked_card,
                    Truncation(),
                )
                ours = e.choices
                assert ours is not None
                assert plain.mask == ours.mask
                assert plain.actions == ours.actions
                assert plain.layout_features == ours.layout_features
                compared += 1
                layable += bool(ours.layout_features)
            legal = e.infos[agent]["legal_actions"]
            e.step(legal[rng.randrange(len(legal))])
    assert compared > 300 and layable > 20
