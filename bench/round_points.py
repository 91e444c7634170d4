"""Where a game's penalty points come from: each round's penalty per seat.

One bot in every seat, in process, fixed seeds; for each round number the mean penalty
a seat takes in it, and the game's total (docs/BOTS.md, "What did not help")::

    python -m bench.round_points --ruleset contract --seats 4 --games 12 --bot expert
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

from clients.bots import make_bot
from clients.turn import engine_turn
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet


def round_points(rules: RuleSet, seats: int, games: int, bot: str) -> dict[str, float]:
    """Mean penalty per seat of each round (by number) and of the whole game."""
    points: defaultdict[int, float] = defaultdict(float)
    for g in range(games):
        bots = [make_bot(bot, s) for s in range(seats)]
        for s, b in enumerate(bots):
            b.setup(rules, s)
        state = GameState.new_game(rules, seats, f"rounds:{g}".encode())
        rng = random.Random(g)
        number, start = state.round_number, sum(state.scores)
        while not state.is_terminal():
            seat = state.to_act[0]
            state, _, _ = engine_turn(state, seat, bots[seat], rng)
            if state.round_number != number or state.is_terminal():
                points[number] += (sum(state.scores) - start) / seats / games
                number, start = state.round_number, sum(state.scores)
    out = {f"round {r}": round(p, 1) for r, p in sorted(points.items())}
    out["game"] = round(sum(points.values()), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ruleset", default="contract", choices=sorted(PRESETS))
    parser.add_argument("--seats", type=int, default=0)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--bot", default="expert")
    args = parser.parse_args()
    rules = PRESETS[args.ruleset]
    print(json.dumps(round_points(rules, args.seats or rules.min_players, args.games, args.bot)))


if __name__ == "__main__":
    main()
