"""What a bot's thinking costs: CPU seconds per seat per game and per decision.

    .venv/bin/python -m bench.bench_bots                 # best, 2 games per table
    GLINTWICK_BENCH_BOTS=best,search GLINTWICK_BENCH_GAMES=4 .venv/bin/python -m bench.bench_bots

Each bot plays whole games in every seat of a whiskertrail two-seat table, a whiskertrail
four-seat table and a contract four-seat table (in process, no server), each seat's
``choose`` timed by the process's CPU clock (``time.process_time``: the machine's load
does not count).  ``best``'s budget (issue 31): at most 2 s of CPU per seat per game on
average and 1 s for any one decision; ``within_budget`` says whether it kept to it here.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from typing import Any

from clients.bots import make_bot
from clients.bots.base import Bot, Situation
from clients.turn import engine_turn
from engine.actions import Action
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL

TABLES = (
    ("whiskertrail", WHISKERTRAIL, 2),
    ("whiskertrail", WHISKERTRAIL, 4),
    ("contract", CONTRACT, 4),
)
SEAT_GAME_BUDGET_S = 2.0
DECISION_BUDGET_S = 1.0


class _Timed(Bot):
    """A bot with its ``choose`` timed (CPU), every decision."""

    def __init__(self, inner: Bot) -> None:
        super().__init__(inner.seed)
        self.inner = inner
        self.name = inner.name
        self.cpu: list[float] = []

    def setup(self, rules: Any, seat: int) -> None:
        super().setup(rules, seat)
        self.inner.setup(rules, seat)

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        started = time.process_time()
        action = self.inner.choose(situation, legal, rng)
        self.cpu.append(time.process_time() - started)
        return action


def _table(spec: str, rules: Any, seats: int, games: int, seed: int) -> dict[str, Any]:
    per_seat_game: list[float] = []
    decisions: list[float] = []
    for g in range(games):
        bots = [_Timed(make_bot(spec, seed + 97 * g + s)) for s in range(seats)]
        for s, bot in enumerate(bots):
            bot.setup(rules, s)
        state = GameState.new_game(rules, seats, f"bench-bots:{seed}:{g}".encode())
        rng = random.Random(seed + g)
        while not state.is_terminal():
            seat = state.to_act[0]
            state, _, _ = engine_turn(state, seat, bots[seat], rng)
        for bot in bots:
            per_seat_game.append(sum(bot.cpu))
            decisions.extend(bot.cpu)
    mean = sum(per_seat_game) / len(per_seat_game)
    return {
        "seat_games": len(per_seat_game),
        "cpu_s_per_seat_game": round(mean, 3),
        "cpu_ms_per_decision": round(1000 * sum(decisions) / len(decisions), 3),
        "max_decision_cpu_s": round(max(decisions), 3),
        "decisions_per_seat_game": round(len(decisions) / len(per_seat_game), 1),
        "within_budget": mean <= SEAT_GAME_BUDGET_S and max(decisions) <= DECISION_BUDGET_S,
    }


def run(games: int | None = None, seed: int = 1) -> dict[str, Any]:
    n = games if games is not None else int(os.environ.get("GLINTWICK_BENCH_GAMES", "2"))
    specs = os.environ.get("GLINTWICK_BENCH_BOTS", "best").split(",")
    out: dict[str, Any] = {"games_per_table": n, "seed": seed}
    for spec in specs:
        out[spec] = {
            f"{name}-{seats}": _table(spec, rules, seats, n, seed) for name, rules, seats in TABLES
        }
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
