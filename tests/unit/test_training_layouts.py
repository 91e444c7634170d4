"""The environment's shortcut to whether a seat may lay its contract gives what the
engine's own path gives.

Before a seat's play decision, while it has not laid its contract, the environment asks
the engine for the solver's layout first (``GameState.automatic_selection``): the
engine's legal actions then read from that memo whether the contract lays, instead of
their own feasibility search (``can_lay``).  The two must agree on every hand: checked
over thousands of random hands of every round of both rule sets, and, along random
games, the environment's mask, legal indices and layout features against a fresh state
of the same game (no memo: the engine's own path) decision by decision."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.training import raw_env
from clients.training.actions import Truncation, choices
from engine.cards import full_deck
from engine.game import GameState, Phase
from engine.rulesets import ruleset
from engine.solver import best_selection, can_lay


@pytest.mark.parametrize("rule_set", ["contract", "whiskertrail"])
def test_can_lay_is_whether_the_solver_finds_a_layout(rule_set: str) -> None:
    rules = ruleset(rule_set)
    rng = random.Random(7)
    deck = list(full_deck(rules.decks, rules.jokers))
    lays = 0
    for _ in range(3000):
        round_number = rng.randrange(1, len(rules.contracts) + 1)
        hand = rng.sample(deck, rng.randrange(8, 31))
        found = best_selection(hand, rules, round_number) is not None
        assert can_lay(hand, rules, round_number) == found
        lays += found
    assert 300 < lays < 2700  # (both answers were seen many times)


def _fresh(game: GameState) -> GameState:
    """The same state without the memo the environment filled (the engine's own path)."""
    fresh = dataclasses.replace(game)
    assert fresh._memo is None
    return fresh


@pytest.mark.parametrize(("rule_set", "seats"), [("contract", 4), ("whiskertrail", 2)])
def test_the_environment_masks_what_the_engine_own_path_gives(rule_set: str, seats: int) -> None:
    e = raw_env(rule_set=rule_set, seats=seats, seed=5)
    rng = random.Random(6)
    compared = layable = 0
    for _ in range(3):
        e.reset()
        while not all(e.terminations.values()):
            agent = e.agent_selection
            game = e.game
            seat = game.to_act[0]
            if game.phase is Phase.PLAY and not game.opened[seat]:
                fresh = _fresh(game)
                plain = choices(
                    e.action_layout,
                    fresh.legal_actions(seat),
                    fresh.hands[seat],
                    e.rules,
                    fresh.round_number,
                    fresh.blocked_card,
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
