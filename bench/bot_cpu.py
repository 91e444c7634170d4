"""CPU per decision of each bot, as it plays in the substitution design.

    .venv/bin/python -m bench.bot_cpu --ruleset contract --seats 4 --deals 3 --seed 303 \\
        --bots random,greedy,strong,expert,search,oracle

Per deal and bot, the bot in each seat among ``--reference`` bots (the substitution
design's games, :mod:`clients.tournament.schedule`); the CPU time (``thread_time``, so
that a loaded machine's waiting is not counted) of every turn of the bot's seat, engine
step included (a few tens of µs: ``random``'s whole figure).  Prints a
JSON line per bot: decisions, mean and largest CPU per decision, CPU per game.
(:mod:`bench.bench_bots` times a bot in every seat against itself, for ``best``'s
budget; this one times it where the strength ladder measures it, the oracle attached
to the true game as the tournament runner attaches it.)
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from clients.bots.oracle import OracleBot
from clients.bots.registry import make_bot
from clients.tournament import schedule as sched
from clients.turn import engine_turn
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet


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
    parser.add_argument("--ruleset", default="whiskertrail", choices=sorted(PRESETS))
    parser.add_argument("--seats", type=int, default=0)
    parser.add_argument("--bots", default="random,greedy,strong,expert")
    parser.add_argument("--reference", default="strong")
    parser.add_argument("--deals", type=int, default=3)
    parser.add_argument("--seed", type=int, default=303)
    args = parser.parse_args()
    rules = PRESETS[args.ruleset]
    seats = args.seats or rules.min_players
    for row in measure(rules, seats, args.bots.split(","), args.reference, args.deals, args.seed):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
