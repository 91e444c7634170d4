"""Datasets and bots: a tournament's and a simulation's logs replay in the environment to
the same scores, the converter's arrays, house bots as policies and a policy as a bot."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from clients.tournament.runner import play_inprocess
from clients.tournament.schedule import GameSpec
from clients.training import ENV_VERSION, raw_env
from clients.training import recording as recording_module
from clients.training.dataset import ReplayError, convert, replay, simulate, write_npz
from clients.training.policies import BotPolicy, Policy, PolicyBot, RandomPolicy
from clients.training.recording import read_log
from engine.rulesets import ruleset
from glintwick_cli import main


class RandomPolicyBot(PolicyBot):
    """A policy bot as a tournament loads one (``module:Class``)."""

    name = "random-policy"

    def make_policy(self) -> Policy:
        return RandomPolicy()


def test_the_recorder_and_the_environment_agree_on_the_version() -> None:
    assert recording_module.ENV_VERSION == ENV_VERSION


def _spec(seats: tuple[str, ...], index: int, seed: bytes) -> GameSpec:
    return GameSpec(index, seats, 0, 0, 0, seats, seed)


@pytest.mark.parametrize(
    ("rule_set", "seats"), [("whiskertrail", ("expert", "greedy")), ("contract", ("expert",) * 4)]
)
def test_a_recorded_tournament_game_replays_to_its_scores(
    tmp_path: Path, rule_set: str, seats: tuple[str, ...]
) -> None:
    result = play_inprocess(_spec(seats, 3, b"\x07" * 16), ruleset(rule_set), 1, tmp_path)
    log = read_log(tmp_path / "game-000003.json")
    assert log["scores"] == result.scores and log["env"] == f"{rule_set}_v{ENV_VERSION}"
    steps = list(replay(log))
    env = steps[-1][0]
    assert len(steps) == len(log["steps"]) and all(env.terminations.values())
    assert list(env.game.scores) == result.scores


def test_a_log_out_of_turn_does_not_replay(tmp_path: Path) -> None:
    spec = _spec(("greedy", "greedy"), 0, b"\x01" * 16)
    play_inprocess(spec, ruleset("whiskertrail"), 1, tmp_path)
    log = read_log(tmp_path / "game-000000.json")
    log["steps"][0][0] = 1 - log["steps"][0][0]
    with pytest.raises(ReplayError, match="out of turn"):
        list(replay(log))
    log = read_log(tmp_path / "game-000000.json")
    log["env_version"] = ENV_VERSION + 1
    with pytest.raises(ReplayError, match="env version"):
        list(replay(log))


def test_the_tournament_command_records_with_in_process_only(tmp_path: Path) -> None:
    argv = ["tournament", "--bots", "greedy,random", "--deals", "1", "--no-progress"]
    assert main([*argv, "--in-process", "--record", str(tmp_path)]) == 0
    logs = sorted(tmp_path.glob("game-*.json"))
    assert len(logs) == 2  # one deal set: both seat orders
    arrays = convert(logs)
    assert set(arrays["game"].tolist()) == {0, 1}
    assert main([*argv, "--record", str(tmp_path / "x")]) == 2


def test_simulated_games_convert_to_arrays(tmp_path: Path) -> None:
    paths = simulate(tmp_path / "logs", "whiskertrail", 2, 2, ["expert", "greedy"], seed=3)
    arrays = write_npz(paths, tmp_path / "expert.npz")
    data = np.load(tmp_path / "expert.npz")  # the documented one line
    env = raw_env(rule_set="whiskertrail", seats=2)
    rows = len(data["action"])
    assert rows > 50
    assert data["observation"].shape == (rows, env.observation_layout.size)
    assert data["action_mask"].shape == (rows, env.action_layout.size)
    assert data["observation"].dtype == np.int8 and data["action"].dtype == np.int32
    for name, array in arrays.items():
        assert np.array_equal(data[name], array)
    # every action taken was legal where it was taken
    assert data["action_mask"][np.arange(rows), data["action"]].all()
    # one last decision per seat and game, and the rewards add up to each game's scores
    assert int(data["done"].sum()) == 2 * 2
    for game, path in enumerate(sorted(paths)):
        scores = read_log(path)["scores"]
        mean = sum(scores) / 2
        for seat in (0, 1):
            mine = (data["game"] == game) & (data["seat"] == seat)
            assert data["reward"][mine].sum() == pytest.approx((mean - scores[seat]) / 100)


def test_house_bots_play_the_environment_as_policies() -> None:
    env = raw_env(rule_set="contract", seats=4, seed=2)
    env.reset()
    players = [BotPolicy(env, name, seed=s) for s, name in enumerate(["expert", "greedy"] * 2)]
    steps = 0
    while not all(env.terminations.values()):
        seat = env.possible_agents.index(env.agent_selection)
        index = players[seat].act_index(seat)
        assert env.infos[env.agent_selection]["action_mask"][index] == 1
        env.step(index)
        steps += 1
    assert env.game.is_terminal() and steps > 100


def test_a_policy_plays_a_tournament_game_as_a_bot() -> None:
    spec = f"{__name__}:RandomPolicyBot"
    result = play_inprocess(_spec((spec, "greedy"), 0, b"\x02" * 16), ruleset("whiskertrail"), 1)
    assert result.illegal == 0 and len(result.scores) == 2 and result.moves > 100


def test_a_policy_bot_sees_what_the_environment_shows() -> None:
    """Along a game played in the environment, the bot's observation (its situation,
    its memory, its legal actions) is the environment's, decision by decision."""
    env = raw_env(rule_set="whiskertrail", seats=2, seed=12)
    env.reset()
    seen: list[dict[str, np.ndarray]] = []

    class Recording:
        def act(self, observation: dict[str, np.ndarray], rng: random.Random) -> int:
            seen.append(observation)
            return RandomPolicy().act(observation, rng)

    class Bot(PolicyBot):
        def make_policy(self) -> Policy:
            return Recording()

    from clients.bots.base import Situation

    bots = [Bot(0), Bot(1)]
    for s, bot in enumerate(bots):
        bot.setup(env.rules, s)
    rng = random.Random(0)
    for _ in range(400):
        if all(env.terminations.values()):
            break
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        expected = env.observe(agent)
        game = env.game
        action = bots[seat].choose(Situation.from_state(game, seat), game.legal_actions(seat), rng)
        assert np.array_equal(seen[-1]["observation"], expected["observation"])
        assert np.array_equal(seen[-1]["action_mask"], expected["action_mask"])
        choices = env.choices
        assert choices is not None
        index = next(i for i, a in choices.actions.items() if a == action)
        env.step(index)
