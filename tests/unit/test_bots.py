"""The bots in process: legal play, reproducibility, and who beats whom on fixed deals."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots import BOTS, make_bot
from clients.bots.base import Situation
from clients.bots.strong import determinize
from clients.tournament import schedule as sched
from clients.tournament.runner import run_inprocess
from clients.tournament.stats import bot_stats
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL
from engine.views import seat_view

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])


def mean_penalties(bots: list[str], deals: int, seed: int) -> dict[str, float]:
    specs = sched.games(bots, 2, deals, seed, "round-robin")
    return {s.bot: s.mean_penalty for s in bot_stats(run_inprocess(specs, SHORT, seed), seed)}


def test_registry_knows_the_builtin_bots() -> None:
    assert {"random", "greedy", "strong", "oracle"} <= set(BOTS)
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("nobody")


@pytest.mark.parametrize("name", ["random", "greedy", "strong"])
def test_bots_play_contract_legally(name: str) -> None:
    """Every choice is one of the legal actions offered (May I?, swaps, no-discard round)."""
    rules = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[-2:])
    state = GameState.new_game(rules, 4, b"bots-contract")
    bots = [make_bot(name, s) for s in range(4)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    rng = random.Random(5)
    steps = 0
    while not state.is_terminal() and steps < 3000:
        seat = state.to_act[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(seat_view(state, seat), legal, rng)
        assert action in legal
        state, _ = state.apply_action(seat, action)
        steps += 1
    assert state.is_terminal()


def test_determinization_matches_the_view() -> None:
    state = GameState.new_game(SHORT, 3, b"det")
    view = seat_view(state, 0)
    sit = Situation.from_view(view, SHORT)
    world = determinize(view, sit, random.Random(1))
    assert world is not None
    assert world.hands[0] == state.hands[0]
    assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
    assert len(world.stock) == len(state.stock) and world.discards[-1] == state.discards[-1]
    assert sorted(c.id for c in world.all_cards()) == sorted(c.id for c in state.all_cards())


def test_duplicate_rotation_gives_every_bot_every_hand() -> None:
    specs = sched.games(["a", "b", "c"], 3, 2, seed=9, schedule="round-robin")
    assert len(specs) == 1 * 2 * 3
    for deal in range(2):
        games = [s for s in specs if s.deal == deal]
        assert len({s.seed for s in games}) == 1  # one deal...
        for bot in "abc":  # ...and each bot held each seat's hand of it once
            assert sorted(s.seats.index(bot) for s in games) == [0, 1, 2]
    assert specs[0].seed != next(s for s in specs if s.deal == 1).seed
    assert sched.games(["a", "b", "c"], 3, 2, seed=9) == specs  # same seed, same schedule
    gauntlet = sched.lineups(["x", "a", "b"], 3, "gauntlet")
    assert gauntlet == [("x", "a", "a"), ("x", "b", "b")]


def test_greedy_beats_random() -> None:
    means = mean_penalties(["greedy", "random"], deals=2, seed=11)
    assert means["greedy"] < means["random"]


def test_strong_beats_greedy() -> None:
    """40 games (20 duplicate deal sets); the margin is small (see docs/BOTS.md)."""
    means = mean_penalties(["strong", "greedy"], deals=20, seed=2)
    assert means["strong"] < means["greedy"]


def test_in_process_runs_reproduce() -> None:
    specs = sched.games(["strong", "greedy"], 2, 1, 4)
    first = [r.row() for r in run_inprocess(specs, SHORT, 4)]
    assert first == [r.row() for r in run_inprocess(specs, SHORT, 4)]
    assert all(r["ruleset_hash"] == SHORT.hash and r["tournament_seed"] == 4 for r in first)
