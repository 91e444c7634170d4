"""Behaviour cloning: the numpy MLP learns a dataset's decisions, saves and loads, and
plays a tournament game as ``ClonedBot``."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from clients.bots.base import Situation
from clients.bots.greedy import missing, wants
from clients.tournament.runner import play_inprocess
from clients.tournament.schedule import GameSpec
from clients.training import GlintwickEnv
from clients.training.actions import card_type
from clients.training.cloning import (
    POLICY_VARIABLE,
    FeaturePolicy,
    MlpPolicy,
    train,
    train_features,
)
from clients.training.dataset import convert, simulate
from clients.training.features import FEATURE_NAMES, CandidateFeatures
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


def test_candidate_features_agree_with_the_solver_on_the_seat_s_own_view() -> None:
    """The features read from the observation alone say what greedy's ``missing`` says
    of the real hand: each closed discard's leave and whether the pile's top helps."""
    env = GlintwickEnv("whiskertrail", 2, seed=3)
    featurizer = CandidateFeatures(env.rules, 2, env.action_layout.layouts)
    names = {n: i for i, n in enumerate(FEATURE_NAMES)}
    rng = random.Random(4)
    checked = {"discard": 0, "pile": 0}
    env.reset(seed=3)
    while not all(env.terminations.values()) and env.steps < 600:
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        obs = env.observe(agent)
        legal, feats = featurizer(obs["observation"], obs["action_mask"])
        sit = Situation.from_state(env.game, seat)
        by_type = {card_type(c): c for c in sit.hand}
        for index, f in zip(legal.tolist(), feats, strict=True):
            t = index - env.action_layout.DISCARD
            if 0 <= t < 53 and not sit.opened:
                rest = list(sit.hand)
                rest.remove(by_type[t])
                assert f[names[f"closed_discard_missing_{missing(rest, sit)}"]] == 1
                checked["discard"] += 1
            if index == env.action_layout.TAKE_DISCARD and not sit.opened:
                assert sit.discard_top is not None
                assert f[names["pile_lowers_missing"]] == wants(sit.discard_top, sit)
                checked["pile"] += 1
        env.step(legal[rng.randrange(len(legal))])
    assert checked["discard"] > 100 and checked["pile"] > 10


def test_the_feature_policy_clones_greedy_and_plays(
    greedy_games: dict[str, np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = ruleset("whiskertrail")
    policy, report = train_features(greedy_games, rules, 2, 8, test_share=0.25)
    assert report["test"]["all"][1] > 0.9  # greedy's rule is in the features' reach
    assert report["test"]["stock"][1] > 0.9
    policy.save(tmp_path / "cloned.npz")
    again = FeaturePolicy.load(tmp_path / "cloned.npz")
    assert np.array_equal(again.weights, policy.weights) and again.rules.hash == rules.hash
    monkeypatch.setenv(POLICY_VARIABLE, str(tmp_path / "cloned.npz"))
    seats = ("clients.training.cloning:ClonedBot", "greedy")
    spec = GameSpec(0, seats, 0, 0, 0, seats, b"\x06" * 16)
    result = play_inprocess(spec, rules, 1)
    assert result.illegal == 0 and result.moves > 100
