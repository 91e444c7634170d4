"""The ``oracle``: an exact simulator of the real table, so a real upper bound on
``strong`` (its base): its rollouts predict what really happens, and a round it plays
never ends worse for it than the same round played by ``strong`` in its seat."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from clients.bots.base import Bot
from clients.bots.oracle import OracleBot
from clients.bots.registry import make_bot
from clients.turn import engine_turn
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet

ONE_ROUND = {
    "whiskertrail": dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1]),
    "contract": dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:2]),
}


def table(rules: RuleSet, names: list[str], seed: int) -> tuple[list[Bot], list[random.Random]]:
    bots: list[Bot] = []
    for s, name in enumerate(names):
        bot = make_bot(name, seed * 10 + s)
        bot.setup(rules, s)
        bots.append(bot)
    return bots, [random.Random(b.seed) for b in bots]


def play_round(
    rules: RuleSet, names: list[str], seed: int, margin: float = 1.0
) -> tuple[list[int], list[OracleBot], list[float]]:
    """One round (the rule set has one): the penalties, the oracles, and every value the
    first oracle's search gave its chosen move, in order."""
    state = GameState.new_game(rules, len(names), bytes([seed]) * 8)
    bots, rngs = table(rules, names, seed)
    oracles = [b for b in bots if isinstance(b, OracleBot)]
    predicted: list[float] = []
    for oracle in oracles:
        oracle.margin = margin
        oracle.attach(lambda: state, bots, rngs)
    if oracles:
        first = oracles[0]
        search = first._rollout

        def recording(*args: object) -> float:
            value = search(*args)  # type: ignore[arg-type]
            predicted.append(value)
            return value

        first._rollout = recording  # type: ignore[method-assign,assignment]
    while not state.is_terminal():
        seat = state.to_act[0]
        state, _, _ = engine_turn(state, seat, bots[seat], rngs[seat])
    return list(state.scores), oracles, predicted


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_the_oracle_that_never_overrules_is_strong_and_predicts_exactly(ruleset: str) -> None:
    """With an infinite margin it plays strong's every move; its first search's value of
    that move is the round's real penalty: the simulation is exact."""
    rules = ONE_ROUND[ruleset]
    seats = 2 if ruleset == "whiskertrail" else 4
    for seed in range(3):
        names = ["oracle"] + ["strong"] * (seats - 1)
        scores, (oracle,), predicted = play_round(rules, names, seed, margin=math.inf)
        assert oracle.overruled == 0 and oracle.searched > 0
        strong_scores, _, _ = play_round(rules, ["strong"] * seats, seed)
        assert scores == strong_scores  # the same game move for move
        assert predicted[0] == scores[0]  # (the base's move is the first value tried)


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_a_round_of_the_oracle_is_never_worse_than_strongs_in_its_seat(ruleset: str) -> None:
    rules = ONE_ROUND[ruleset]
    seats = 2 if ruleset == "whiskertrail" else 4
    gains = []
    for seed in range(6):
        others = ["strong", "greedy", "random"][: seats - 1]
        oracle_scores, (oracle,), _ = play_round(rules, ["oracle", *others], seed)
        strong_scores, _, _ = play_round(rules, ["strong", *others], seed)
        assert oracle_scores[0] <= strong_scores[0], (seed, oracle_scores, strong_scores)
        gains.append(strong_scores[0] - oracle_scores[0])
        assert oracle.searched > 0
    assert sum(gains) > 0  # and it does find better moves


def test_through_the_api_it_is_strong() -> None:
    """Nothing attached (a server shows no hidden card): every move is strong's."""
    rules = ONE_ROUND["whiskertrail"]
    state = GameState.new_game(rules, 2, b"api play")
    oracle, strong = make_bot("oracle", 5), make_bot("strong", 5)
    oracle.setup(rules, 0)
    strong.setup(rules, 0)
    rng_a, rng_b = random.Random(1), random.Random(1)
    other = make_bot("greedy", 6)
    other.setup(rules, 1)
    twin = GameState.new_game(rules, 2, b"api play")
    while not state.is_terminal():
        seat = state.to_act[0]
        mover = oracle if seat == 0 else other
        state, action, _ = engine_turn(state, seat, mover, rng_a)
        twin, twin_action, _ = engine_turn(twin, seat, strong if seat == 0 else other, rng_b)
        assert action == twin_action
