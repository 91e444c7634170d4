"""Datasets: games played by bots, logged (:mod:`.recording`), and the converter that
replays logs in the environment into per-decision arrays.

``simulate`` plays games in the environment with registered bots and writes one log per
game; a tournament writes the same logs (``glintwick tournament --in-process --record
DIR``).  ``convert`` replays logs and returns, per decision (rows in game order):

=============== ========================= ==========================================
``observation`` int8 (N, observation size) the acting seat's observation
``action_mask`` int8 (N, actions)          its legal actions
``action``      int32 (N,)                 the index it took
``reward``      float32 (N,)               what the seat earned until its next decision
``done``        bool (N,)                  the seat's last decision of the episode
``seat``        int8 (N,)                  ``game`` int32 (N,): the log's place
=============== ========================= ==========================================

``write_npz`` saves them; one line loads them: ``data = numpy.load("expert.npz")``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from clients.training.env import ENV_VERSION, GlintwickEnv
from clients.training.policies import BotPolicy
from clients.training.recording import GameRecorder, read_log

__all__ = ["ReplayError", "convert", "simulate", "write_npz"]


class ReplayError(ValueError):
    """A log that does not replay: another rule set, version, or a step out of turn."""


def simulate(
    directory: Path,
    rule_set: str,
    seats: int,
    games: int,
    bots: Sequence[str],
    seed: int = 1,
    first: int = 0,
) -> list[Path]:
    """Play ``games`` games in the environment, ``bots[s]`` (cycled) at seat ``s``, and
    write their logs to ``directory`` as ``game-<first + k>.json``."""
    env = GlintwickEnv(rule_set, seats)
    rng = random.Random(seed)
    written = []
    for k in range(games):
        env.reset(options={"game_seed": rng.randbytes(16)})
        lineup = [bots[(s + k) % len(bots)] for s in range(seats)]
        players = [BotPolicy(env, spec, seed * 1000 + k * 10 + s) for s, spec in enumerate(lineup)]
        recorder = GameRecorder(env.game, lineup, env.action_layout.layouts)
        while not all(env.terminations.values()):
            seat = env.possible_agents.index(env.agent_selection)
            index = players[seat].act_index(seat)
            recorder.steps.append((seat, index))
            env.step(index)
        written.append(recorder.write(directory, first + k, env.game))
    return written


def replay(log: dict[str, Any]) -> Iterable[tuple[GlintwickEnv, int, int]]:
    """Step ``log``'s game in a fresh environment: yields (env, seat, index) before each
    step, the environment showing what the seat saw."""
    if log.get("env_version") != ENV_VERSION:
        raise ReplayError(f"a log of env version {log.get('env_version')}, not {ENV_VERSION}")
    env = GlintwickEnv(log["rules"], log["seats"], layouts=log["layouts"])
    if env.rules.hash != log["rules_hash"]:
        raise ReplayError("the log's rule set does not hash to its rules_hash")
    env.reset(options={"game_seed": log["seed"]})
    for seat, index in log["steps"]:
        if env.agent_selection != env.possible_agents[seat] or all(env.terminations.values()):
            raise ReplayError(f"step {seat, index} out of turn ({env.agent_selection} acts)")
        yield env, seat, index
        env.step(index)


def convert(paths: Iterable[Path]) -> dict[str, NDArray[Any]]:
    """Every decision of the logs at ``paths`` as arrays (the module's table)."""
    observations: list[NDArray[np.int8]] = []
    masks: list[NDArray[np.int8]] = []
    actions: list[int] = []
    rewards: list[float] = []
    seats: list[int] = []
    games: list[int] = []
    done: list[bool] = []
    for game, path in enumerate(sorted(paths)):
        last: dict[int, int] = {}
        env: GlintwickEnv | None = None

        def collect(env: GlintwickEnv | None, last: dict[int, int] = last) -> None:
            # the rewards of the step just taken, to each seat's latest decision
            if env is None:
                return
            for s, row in last.items():
                rewards[row] += env.rewards[env.possible_agents[s]]

        for env, seat, index in replay(read_log(path)):
            collect(env if actions and games[-1] == game else None)
            seen = env.observe(env.possible_agents[seat])
            if not seen["action_mask"][index]:
                raise ReplayError(f"{path}: action {index} is not legal for seat {seat}")
            last[seat] = len(actions)
            observations.append(seen["observation"])
            masks.append(seen["action_mask"])
            actions.append(index)
            rewards.append(0.0)
            seats.append(seat)
            games.append(game)
            done.append(False)
        collect(env)
        for row in last.values():
            done[row] = True
    width = (0, 0)
    if observations:
        width = (observations[0].size, masks[0].size)
    return {
        "observation": np.array(observations, dtype=np.int8).reshape(-1, width[0]),
        "action_mask": np.array(masks, dtype=np.int8).reshape(-1, width[1]),
        "action": np.array(actions, dtype=np.int32),
        "reward": np.array(rewards, dtype=np.float32),
        "done": np.array(done, dtype=bool),
        "seat": np.array(seats, dtype=np.int8),
        "game": np.array(games, dtype=np.int32),
    }


def write_npz(paths: Iterable[Path], out: Path) -> dict[str, NDArray[Any]]:
    """:func:`convert` the logs and save the arrays (compressed) to ``out``."""
    arrays = convert(paths)
    np.savez_compressed(out, allow_pickle=False, **arrays)
    return arrays
