"""What a bot's thinking costs: CPU seconds per seat per game and per decision.

Two designs, one module:

* **self-play** (``make bench``; ``run()``): each bot plays whole games in every seat of a
  whiskertrail two-seat table, a whiskertrail four-seat table and a contract four-seat
  table, each seat's ``choose`` timed.  ``best``'s budget (issue 31): at most 2 s of CPU
  per seat per game on average and 1 s for any one decision; ``within_budget`` says
  whether it kept to it here::

      .venv/bin/python -m bench.bench_bots                 # best, 2 games per table
      GLINTWICK_BENCH_BOTS=best,search GLINTWICK_BENCH_GAMES=4 .venv/bin/python -m bench.bench_bots

* **substitution** (``--design substitution``): per deal and bot, the bot in each seat
  among ``--reference`` bots (the substitution design's games,
  :mod:`clients.tournament.schedule`, the oracle attached to the true game as the
  tournament runner attaches it), so a bot is timed where the strength ladder measures
  it; every turn of the bot's seat, engine step included (a few tens of µs: ``random``'s
  whole figure).  A JSON line per bot::

      .venv/bin/python -m bench.bench_bots --design substitution --ruleset contract \\
          --seats 4 --deals 3 --seed 303 --bots random,greedy,strong,expert,search,oracle

CPU time is the thread's (``time.thread_time``): a loaded machine's waiting does not
count, its cache misses do.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Sequence
from typing import Any

from clients.bots import make_bot
from clients.bots.base import Bot, Situation
from clients.bots.oracle import OracleBot
from clients.tournament import schedule as sched
from clients.turn import engine_turn
from engine.actions import Action
from engine.game import GameState
from engine.rulesets import CONTRACT, PRESETS, WHISKERTRAIL, RuleSet

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
        started = time.thread_time()
        action = self.inner.choose(situation, legal, rng)
        self.cpu.append(time.thread_time() - started)
        return action


# ---------------------------------------------------------------------- self-play
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


# ---------------------------------------------------------------------- substitution
def seat_cpu(spec: sched.GameSpec, rules: RuleSet, seed: int, seat: int) -> list[float]:
    """The CPU seconds of each turn of ``seat`` in one game (played as the runner plays
    it in process: the same bots, seeds and attachments)."""
    state = GameState.new_game(rules, len(spec.seats), spec.seed)
    bots = []
    for s, name in enumerate(spec.seats):
        bot = make_bot(name, spec.bot_seed(seed, s))
        bot.setup(rules, s)
        bots.append(bot)
    rngs = [random.Random(bot.seed) for bot in bots]
    for bot in bots:
        if isinstance(bot, OracleBot):
            bot.attach(lambda: state, bots, rngs)
    out = []
    while not state.is_terminal():
        acting = state.to_act[0]
        started = time.thread_time()
        state, _, _ = engine_turn(state, acting, bots[acting], rngs[acting])
        if acting == seat:
            out.append(time.thread_time() - started)
    return out


def measure(
    rules: RuleSet, seats: int, bots: list[str], reference: str, deals: int, seed: int
) -> list[dict[str, Any]]:
    """One row per bot: its CPU where the substitution design plays it."""
    out = []
    for bot in bots:
        if bot == reference:
            specs = [
                s
                for s in sched.games([reference, "random"], seats, deals, seed, "substitution")
                if s.reference
            ]
            seat_of = dict.fromkeys((s.index for s in specs), 0)
        else:
            specs = [
                s
                for s in sched.games([reference, bot], seats, deals, seed, "substitution")
                if not s.reference
            ]
            seat_of = {s.index: s.rotation for s in specs}
        turns: list[float] = []
        for spec in specs:
            turns += seat_cpu(spec, rules, seed, seat_of[spec.index])
        out.append(
            {
                "bot": bot,
                "ruleset": rules.name,
                "seats": seats,
                "games": len(specs),
                "decisions": len(turns),
                "cpu_ms_per_decision": round(1000 * sum(turns) / len(turns), 3),
                "cpu_ms_largest": round(1000 * max(turns), 1),
                "cpu_s_per_game": round(sum(turns) / len(specs), 3),
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=("self-play", "substitution"), default="self-play")
    parser.add_argument("--ruleset", default="whiskertrail", choices=sorted(PRESETS))
    parser.add_argument("--seats", type=int, default=0)
    parser.add_argument("--bots", default="random,greedy,strong,expert")
    parser.add_argument("--reference", default="strong")
    parser.add_argument("--deals", type=int, default=3)
    parser.add_argument("--seed", type=int, default=303)
    args = parser.parse_args()
    if args.design == "self-play":
        print(json.dumps(run(), indent=2))
        return
    rules = PRESETS[args.ruleset]
    seats = args.seats or rules.min_players
    for row in measure(rules, seats, args.bots.split(","), args.reference, args.deals, args.seed):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
