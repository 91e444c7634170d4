"""The training environment's speed: random play through the AEC cycle, beside the bare
engine's random play and RLCard's gin rummy, all measured in this one run.

Three loops of uniform random agents over whole games:

* ``env``: :class:`clients.training.GlintwickEnv`, one ``observe`` of the acting seat
  per step (what an agent's forward pass needs), a random pick from
  ``infos[agent]["legal_actions"]`` (as RLCard's agent picks from its state's
  ``legal_actions``), then ``step``; also without the ``observe``
  (``env_mask_only``), and with the agent finding the legal indices in the mask
  itself (``np.flatnonzero``: ``env_scanning_the_mask``);
* ``engine``: ``bench.bench_engine.play`` (legal actions and apply, nothing built);
* ``rlcard_gin_rummy``: ``rlcard.make("gin-rummy")`` with a random legal action per
  step (its own observation is built every step); skipped when rlcard is not installed
  (``make bench`` installs it in the venv; it is no dependency of the project).

Steps/s are the medians over the repeats of steps per second of the process's CPU time
(a loaded machine's waiting is not in it; a *step* is one agent action in every loop:
RLCard's "turn" in the issue's wording).  Goal: ``env`` at least 3x RLCard's gin rummy.

    python -m bench.bench_training [--games N] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

import numpy as np

from bench.bench_engine import play
from clients.training import GlintwickEnv
from engine.rulesets import ruleset

GOAL_RATIO = 3.0
CONFIGS: tuple[tuple[str, int], ...] = (("whiskertrail", 2), ("whiskertrail", 4), ("contract", 4))


def env_steps(
    name: str, seats: int, games: int, observe: bool, scan: bool = False
) -> tuple[int, float]:
    env = GlintwickEnv(name, seats, seed=1)
    rng = random.Random(2)
    steps = 0
    started = time.process_time()
    for _ in range(games):
        env.reset()
        while not all(env.terminations.values()):
            agent = env.agent_selection
            if observe:
                env.observe(agent)
            if scan:  # the agent finds the legal indices in the mask itself
                legal = np.flatnonzero(env.infos[agent]["action_mask"]).tolist()
            else:
                legal = env.infos[agent]["legal_actions"]  # (as RLCard's state["legal_actions"])
            env.step(legal[rng.randrange(len(legal))])
            steps += 1
    return steps, time.process_time() - started


def engine_steps(name: str, seats: int, games: int) -> tuple[int, float]:
    rules = ruleset(name)
    steps = 0
    started = time.process_time()
    for game in range(games):
        steps += play(rules, seats, f"train/{game}".encode(), random.Random(game))
    return steps, time.process_time() - started


def rlcard_steps(games: int) -> tuple[int, float] | None:
    try:
        import rlcard  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": 3})
    rng = random.Random(4)
    steps = 0
    started = time.process_time()
    for _ in range(games):
        state, _player = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _player = env.step(legal[rng.randrange(len(legal))])
            steps += 1
    return steps, time.process_time() - started


def _median_rate(runs: list[tuple[int, float]]) -> float:
    return statistics.median(s / t for s, t in runs)


def run(games: int = 6, repeats: int = 3) -> dict[str, Any]:
    out: dict[str, Any] = {}
    gin = [r for r in (rlcard_steps(games * 10) for _ in range(repeats)) if r is not None]
    gin_rate = _median_rate(gin) if gin else None
    out["rlcard_gin_rummy_steps_per_s"] = round(gin_rate) if gin_rate else None
    for name, seats in CONFIGS:
        env_runs = [env_steps(name, seats, games, True) for _ in range(repeats)]
        mask_runs = [env_steps(name, seats, games, False) for _ in range(repeats)]
        scan_runs = [env_steps(name, seats, games, True, scan=True) for _ in range(repeats)]
        engine_runs = [engine_steps(name, seats, games) for _ in range(repeats)]
        rate = _median_rate(env_runs)
        out[f"{name}/{seats}"] = {
            "env_steps_per_s": round(rate),
            "env_mask_only_steps_per_s": round(_median_rate(mask_runs)),
            "env_scanning_the_mask_steps_per_s": round(_median_rate(scan_runs)),
            "engine_steps_per_s": round(_median_rate(engine_runs)),
            "steps": env_runs[0][0],
            "vs_rlcard_gin_rummy": round(rate / gin_rate, 2) if gin_rate else None,
        }
    out["goal_vs_rlcard"] = GOAL_RATIO
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(run(args.games, args.repeats), indent=2))


if __name__ == "__main__":
    main()
