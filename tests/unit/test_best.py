"""``best``: the registry's alias of the strongest bot by measurement (docs/BOTS.md), the web
table's strongest house-bot level: a registered bot of its own class, deterministic for a
seed, within its per-decision budget of work."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import pytest

from clients.bots import bot_name, known_bots, make_bot, resolve
from clients.bots.base import Bot
from clients.turn import engine_turn
from engine.actions import Action
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet

ROOT = Path(__file__).resolve().parents[2]
ONE_ROUND = {
    "whiskertrail": dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[1:2]),
    "contract": dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:2]),
}


def test_best_is_an_alias_of_another_registered_bot() -> None:
    """Tools name it without knowing which bot it is; results name the bot it is."""
    champion = resolve("best")
    others = {name: resolve(name) for name in known_bots() if name != "best"}
    assert champion in others.values()
    assert bot_name("best") in others and others[bot_name("best")] is champion


def test_best_is_the_web_tables_strongest_level_and_a_default_house_bot() -> None:
    from glintwick_cli import HOUSE_BOTS

    assert "best" in HOUSE_BOTS.split(",")
    page = (ROOT / "services" / "web" / "dom.js").read_text()  # the levels the page offers
    levels = re.search(r"const STRENGTHS = (\[.*\]);", page)
    assert levels is not None
    assert re.findall(r'\["(\w+)", "\w+"\]', levels.group(1))[-1] == "best"


def _play(rules: RuleSet, seats: int, seed: int) -> tuple[list[Action], list[Bot]]:
    bots = [make_bot("best", seed + s) for s in range(seats)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    state = GameState.new_game(rules, seats, bytes([seed]) * 8)
    rng = random.Random(seed)
    moves: list[Action] = []
    while not state.is_terminal():
        seat = state.to_act[0]
        state, action, _ = engine_turn(state, seat, bots[seat], rng)
        moves.append(action)
    return moves, bots


@pytest.mark.parametrize(
    ("ruleset", "seats"), [("whiskertrail", 2), ("whiskertrail", 4), ("contract", 4)]
)
def test_best_is_deterministic_for_a_seed(ruleset: str, seats: int) -> None:
    first, _ = _play(ONE_ROUND[ruleset], seats, 4)
    again, _ = _play(ONE_ROUND[ruleset], seats, 4)
    assert again == first


#: the work of one decision, in solver calls (``missing`` or ``analyse`` of a hand): a
#: rule bot judges each distinct card kind of its hand once (expert: at most one call
#: per card in hand and one more), so two per card leaves room; a solver call is
#: bounded itself (it looks for at most LIMIT missing cards)
SOLVER_CALLS_PER_CARD = 2


@pytest.mark.parametrize(
    ("ruleset", "seats"), [("whiskertrail", 2), ("whiskertrail", 4), ("contract", 4)]
)
def test_best_keeps_to_its_per_decision_budget_of_work(
    ruleset: str, seats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in work units, not seconds: rollouts per decision for a search bot (at
    most its budget: worlds × candidates), solver calls per decision for a rule bot (at
    most two per card in hand and one more)."""
    import clients.bots.greedy as greedy
    import clients.bots.strong as strong

    calls = [0]

    def counted(function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return function(*args, **kwargs)

        return call

    from engine import solver

    # the bots' own references to the solver's entry points
    monkeypatch.setattr(greedy, "missing_cards", counted(solver.missing_cards))
    monkeypatch.setattr(strong, "analyse", counted(solver.analyse))
    rules = ONE_ROUND[ruleset]
    bots = [make_bot("best", 7 + s) for s in range(seats)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    state = GameState.new_game(rules, seats, b"budget!!")
    rng = random.Random(7)
    most_calls = most_rollouts = 0
    while not state.is_terminal():
        seat = state.to_act[0]
        hand = len(state.hands[seat])
        before, rolled = calls[0], getattr(bots[seat], "rollouts", 0)
        state, _, _ = engine_turn(state, seat, bots[seat], rng)
        rollouts = getattr(bots[seat], "rollouts", 0) - rolled
        most_rollouts = max(most_rollouts, rollouts)
        if rollouts == 0:
            most_calls = max(most_calls, calls[0] - before)
            assert calls[0] - before <= SOLVER_CALLS_PER_CARD * (hand + 1)
    assert most_calls > 0
    assert most_rollouts <= getattr(bots[0], "budget_rollouts", 0)
