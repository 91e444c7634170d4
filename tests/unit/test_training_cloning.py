"""Behaviour cloning: the numpy MLP learns a dataset's decisions, saves and loads, and
plays a tournament game as ``ClonedBot``."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from clients.tournament.runner import play_inprocess
from clients.tournament.schedule import GameSpec
from clients.training.cloning import POLICY_VARIABLE, MlpPolicy, train
from clients.training.dataset import convert, simulate
from engine.rulesets import ruleset


@pytest.fixture(scope="module")
def greedy_games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    logs = tmp_path_factory.mktemp("logs")
    return convert(simulate(logs, "whiskertrail", 2, 4, ["greedy"], seed=5))


def test_the_clone_learns_more_than_chance_and_round_trips(
    greedy_games: dict[str, np.ndarray], tmp_path: Path
) -> None:
    policy, report = train(greedy_games, hidden=32, epochs=4, test_share=0.25)
    choice = greedy_games["action_mask"].sum(axis=1) > 1
    # a uniform pick among the legal actions would be right this often
    chance = float((1.0 / greedy_games["action_mask"][choice].sum(axis=1)).mean())
    assert report.rows > 300
    assert report.train_accuracy > chance + 0.2
    assert report.test_accuracy > chance
    policy.save(tmp_path / "p.npz")
    again = MlpPolicy.load(tmp_path / "p.npz")
    x = greedy_games["observation"][:50]
    assert np.array_equal(policy.logits(x), again.logits(x))
    observation = {
        "observation": greedy_games["observation"][0],
        "action_mask": greedy_games["action_mask"][0],
    }
    assert greedy_games["action_mask"][0][again.act(observation, random.Random(0))] == 1


def test_the_clone_plays_a_tournament_game(
    greedy_games: dict[str, np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy, _ = train(greedy_games, hidden=16, epochs=1)
    policy.save(tmp_path / "cloned.npz")
    monkeypatch.setenv(POLICY_VARIABLE, str(tmp_path / "cloned.npz"))
    seats = ("clients.training.cloning:ClonedBot", "greedy")
    spec = GameSpec(0, seats, 0, 0, 0, seats, b"\x05" * 16)
    result = play_inprocess(spec, ruleset("whiskertrail"), 1)
    assert result.illegal == 0 and result.moves > 100
