"""Engine speed: complete games between uniform random agents, no invariant checks.

One *step* is what an environment step costs an agent: ``legal_actions(seat)`` for a
seat that may act, a uniform random pick (``random.Random(seed)``, never the global
one) and ``apply_action``.  For each configuration (rule set, seats) the same games
are played ``repeats`` times; steps/s and games/s are the medians over the repeats.

Reference point: RLCard's gin-rummy environment does 7,300-8,500 agent steps/s on this
kind of machine; the target here is at least 8,500 steps/s.

    python -m bench.bench_engine [--games N] [--repeats R]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import time
from typing import Any

from engine.game import GameState
from engine.rulesets import RuleSet, ruleset

TARGET_STEPS_PER_S = 8_500
CONFIGS: tuple[tuple[str, int], ...] = (
    ("whiskertrail", 2),
    ("whiskertrail", 3),
    ("whiskertrail", 4),
    ("contract", 4),
)


MAX_STEPS = 1_000_000


def play(rules: RuleSet, seats: int, seed: bytes, rng: random.Random) -> int:
    """One complete game between uniform random agents; returns its number of steps."""
    state = GameState.new_game(rules, seats, seed)
    steps = 0
    while not state.is_terminal():
        if steps >= MAX_STEPS:
            raise RuntimeError(f"{rules.name} game {seed.hex()} still running after {steps} steps")
        to_act = state.to_act
        seat = to_act[0] if len(to_act) == 1 else to_act[rng.randrange(len(to_act))]
        legal = state.legal_actions(seat)
        state, _ = state.apply_action(seat, legal[rng.randrange(len(legal))])
        steps += 1
    return steps


def _seed(name: str, seats: int, game: int) -> bytes:
    return hashlib.sha256(f"bench/{name}/{seats}/{game}".encode()).digest()[:16]


def _measure(rules: RuleSet, seats: int, games: int) -> tuple[int, float]:
    steps = 0
    started = time.perf_counter()
    for game in range(games):
        rng = random.Random(f"bench-rng/{rules.name}/{seats}/{game}")
        steps += play(rules, seats, _seed(rules.name, seats, game), rng)
    return steps, time.perf_counter() - started


def run(games: int = 8, repeats: int = 3) -> dict[str, Any]:
    """Play ``games`` games per configuration, ``repeats`` times; medians per configuration."""
    configs: dict[str, Any] = {}
    total_steps = 0
    total_times: list[float] = [0.0] * repeats
    for name, seats in CONFIGS:
        rules = ruleset(name)
        runs = [_measure(rules, seats, games) for _ in range(repeats)]
        steps = runs[0][0]
        assert all(s == steps for s, _ in runs), "the same games took different step counts"
        times = [t for _, t in runs]
        for i, t in enumerate(times):
            total_times[i] += t
        total_steps += steps
        configs[f"{name}/{seats}"] = {
            "games": games,
            "steps": steps,
            "steps_per_game": round(steps / games, 1),
            "steps_per_s": round(statistics.median(steps / t for t in times)),
            "games_per_s": round(statistics.median(games / t for t in times), 2),
        }
    overall = round(statistics.median(total_steps / t for t in total_times))
    return {
        "agents": "uniform random",
        "repeats": repeats,
        "configs": configs,
        "steps_per_s": overall,
        "games_per_s": round(statistics.median(games * len(CONFIGS) / t for t in total_times), 2),
        "target_steps_per_s": TARGET_STEPS_PER_S,
        "meets_target": overall >= TARGET_STEPS_PER_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games per configuration")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(run(args.games, args.repeats), indent=2))


if __name__ == "__main__":
    main()
