"""Where a bot's points go, round by round (docs/BOT_STUDIES.md).

``detail``: one bot in every seat; per round number the mean penalty per seat, the share
of seats that laid their contract, the turn they laid it (completed turns of the round)
and the hand they laid it from, lay-offs, swaps and claims per seat, the points of the
seats open and closed at the end, and how the rounds ended::

    python -m bench.round_detail detail --ruleset contract --games 40 --bot expert

``pairs``: the substitution design round by round: per deal, the reference in every
seat, then the candidate in each seat among references; each round's paired difference
per seat (candidate minus the reference in the same seat of the same deal), mean and a
normal 95 % half-width over deals.  A round's deal does not depend on earlier play, so
a rule that changes one round's play shows in that round alone::

    python -m bench.round_detail pairs --ruleset contract --games 40 \\
        --bot expert --candidate clients.bots.closer:CloserBot
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from clients.bots import make_bot
from clients.turn import engine_turn
from engine.actions import Claim, Discard, EndTurn, LayContract, LayOff, SwapJoker
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet

Rounds = dict[int, list[int]]
Fact = dict[str, Any]  # a round's counts, the seats that opened, how it ended


def play(rules: RuleSet, names: Sequence[str], seed: bytes) -> tuple[Rounds, dict[int, Fact]]:
    """One game: each round's penalty per seat, and what happened in it."""
    seats = len(names)
    bots = [make_bot(name, s) for s, name in enumerate(names)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    state = GameState.new_game(rules, seats, seed)
    rng = random.Random(seed)
    penalties: Rounds = {}
    facts: dict[int, Fact] = {}
    number, start = state.round_number, list(state.scores)
    fact: Fact = defaultdict(int, opened={})
    while not state.is_terminal():
        seat = state.to_act[0]
        hand = len(state.hands[seat])
        state, action, events = engine_turn(state, seat, bots[seat], rng)
        if isinstance(action, Discard | EndTurn):
            fact["turns"] += 1
        elif isinstance(action, LayContract):
            fact["opened"][seat] = (fact["turns"], hand)
        elif isinstance(action, LayOff | SwapJoker | Claim):
            fact[type(action).__name__] += 1
        for event in events:
            if event.type == "round_ended":
                fact["reason"] = event.public["reason"]
        if state.round_number != number or state.is_terminal():
            penalties[number] = [a - b for a, b in zip(state.scores, start, strict=True)]
            facts[number] = fact
            number, start = state.round_number, list(state.scores)
            fact = defaultdict(int, opened={})
    return penalties, facts


def detail(rules: RuleSet, seats: int, games: int, bot: str) -> dict[int, dict[str, object]]:
    sums: dict[int, defaultdict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    ends: dict[int, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    for g in range(games):
        penalties, facts = play(rules, [bot] * seats, f"detail:{g}".encode())
        for number, fact in facts.items():
            row = sums[number]
            opened = fact["opened"]
            row["points"].append(sum(penalties[number]) / seats)
            row["opened share"].append(len(opened) / seats)
            for turn, hand in opened.values():
                row["open turn"].append(turn)
                row["hand at open"].append(hand)
            for name in ("LayOff", "SwapJoker", "Claim"):
                row[name + " per seat"].append(fact[name] / seats)
            for s, p in enumerate(penalties[number]):
                row["open seat points" if s in opened else "closed seat points"].append(p)
            ends[number][fact.get("reason", "?")] += 1
    return {
        number: {
            **{k: round(sum(v) / len(v), 2) for k, v in row.items() if v},
            "ends": dict(ends[number]),
        }
        for number, row in sorted(sums.items())
    }


def pairs(rules: RuleSet, seats: int, games: int, reference: str, candidate: str) -> dict[str, str]:
    diffs: defaultdict[str, list[float]] = defaultdict(list)
    for g in range(games):
        seed = f"pairs:{g}".encode()
        own, _ = play(rules, [reference] * seats, seed)
        per_round: defaultdict[int, float] = defaultdict(float)
        for s in range(seats):
            names = [reference] * seats
            names[s] = candidate
            theirs, _ = play(rules, names, seed)
            for number in own:
                per_round[number] += (theirs[number][s] - own[number][s]) / seats
        for number, d in per_round.items():
            diffs[f"round {number}"].append(d)
        diffs["game"].append(sum(per_round.values()))
    out: dict[str, str] = {}
    for key, values in diffs.items():
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)
        out[key] = f"{mean:+.2f} ± {1.96 * math.sqrt(var / len(values)):.2f}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("detail", "pairs"))
    parser.add_argument("--ruleset", default="contract", choices=sorted(PRESETS))
    parser.add_argument("--seats", type=int, default=0)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--bot", default="expert", help="the bot (pairs: the reference)")
    parser.add_argument("--candidate", default="expert", help="pairs: the candidate")
    args = parser.parse_args()
    rules = PRESETS[args.ruleset]
    seats = args.seats or rules.min_players
    if args.mode == "detail":
        for number, row in detail(rules, seats, args.games, args.bot).items():
            print(f"round {number}: {json.dumps(row)}")
    else:
        print(json.dumps(pairs(rules, seats, args.games, args.bot, args.candidate), indent=1))


if __name__ == "__main__":
    main()
