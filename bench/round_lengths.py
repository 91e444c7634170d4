"""How long `contract` rounds run, with and without the dead-round rule.

Plays the same contract matches (four seats, one bot kind at every seat, fixed seeds)
in process twice: under the `contract` preset as it was before the dead-round rule
(``dead_round_ends`` false: a round nobody can go out of runs to the 200-turn valve)
and under the preset (a dead round ends at once; docs/RULES.md, rule 6).  For each
round number it reports the completed turns per round (median, 90th percentile,
most), how the rounds ended, and how many hit the valve; for the whole match, the
turns and the actions a seat answers (draws, discards, lay-downs and May I? answers:
what a person at the table clicks or waits through).

    python -m bench.round_lengths [--games 20] [--bot expert] [--seat0 greedy]

``--seat0`` seats another bot at seat 0, a stand-in for the person at a table of house
bots.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from clients.bots import Bot, make_bot
from clients.turn import engine_turn
from engine.game import GameState
from engine.rulesets import CONTRACT, RuleSet

#: the `contract` preset before the rule: only the turn cap ends a dead round
BEFORE = dataclasses.replace(CONTRACT, dead_round_ends=False)


@dataclasses.dataclass(frozen=True)
class RoundEnd:
    number: int
    reason: str
    turns: int  # completed turns of the round
    actions: int  # actions of the round, claim answers included


def start_match(
    rules: RuleSet, bot: str, index: int, seat0: str | None = None
) -> tuple[GameState, list[Bot], random.Random]:
    """Match ``index``'s deal, bots (``bot`` at every seat, ``seat0`` at seat 0 if
    given) and turn generator: the same for every benchmark that plays these matches."""
    seed = hashlib.sha256(f"round-lengths/{index}".encode()).digest()[:16]
    kinds = [seat0 or bot, bot, bot, bot]
    bots = [make_bot(kinds[seat], index * 10 + seat) for seat in range(4)]
    for seat, b in enumerate(bots):
        b.setup(rules, seat)
    return GameState.new_game(rules, 4, seed), bots, random.Random(index)


def play_match(rules: RuleSet, bot: str, index: int, seat0: str | None = None) -> list[RoundEnd]:
    """One match of ``bot`` at every seat (``seat0`` at seat 0 if given): how each
    round ended."""
    state, bots, rng = start_match(rules, bot, index, seat0)
    ends: list[RoundEnd] = []
    turns = actions = 0
    while not state.is_terminal():
        seat = state.to_act[0]
        state, _, events = engine_turn(state, seat, bots[seat], rng)
        actions += 1
        for e in events:
            if e.type == "turn_ended":
                turns = int(e.public["turns_completed"])
            elif e.type == "round_ended":
                ends.append(
                    RoundEnd(int(e.public["round"]), str(e.public["reason"]), turns, actions)
                )
                turns = actions = 0
    return ends


def _percentile(values: Sequence[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(matches: Sequence[list[RoundEnd]], cap: int) -> dict[str, Any]:
    by_round: dict[int, list[RoundEnd]] = defaultdict(list)
    for ends in matches:
        for end in ends:
            by_round[end.number].append(end)
    rounds = []
    for number in sorted(by_round):
        ends = by_round[number]
        turns = [e.turns for e in ends]
        rounds.append(
            {
                "round": number,
                "contract": CONTRACT.contract(number).name,
                "turns_median": statistics.median(turns),
                "turns_p90": _percentile(turns, 0.9),
                "turns_max": max(turns),
                "at_valve": sum(1 for e in ends if e.reason == "turn_cap"),
                "reasons": dict(Counter(e.reason for e in ends)),
            }
        )
    match_turns = [sum(e.turns for e in ends) for ends in matches]
    match_actions = [sum(e.actions for e in ends) for ends in matches]
    every = [e for ends in matches for e in ends]
    return {
        "matches": len(matches),
        "rounds": len(every),
        "rounds_at_valve": sum(1 for e in every if e.turns >= cap),
        "matches_with_a_round_at_valve": sum(
            1 for ends in matches if any(e.turns >= cap for e in ends)
        ),
        "match_turns_median": statistics.median(match_turns),
        "match_turns_max": max(match_turns),
        "match_actions_median": statistics.median(match_actions),
        "reasons": dict(Counter(e.reason for e in every)),
        "by_round": rounds,
    }


def run(games: int = 20, bot: str = "expert", seat0: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"bot": bot, "seat0": seat0 or bot, "games": games}
    for label, rules in (("before", BEFORE), ("after", CONTRACT)):
        started = time.perf_counter()
        matches = [play_match(rules, bot, i, seat0) for i in range(games)]
        assert rules.turn_cap is not None
        out[label] = summarise(matches, rules.turn_cap)
        out[label]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--bot", default="expert")
    parser.add_argument("--seat0", default=None, help="another bot at seat 0")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.games, args.bot, args.seat0), indent=2))


if __name__ == "__main__":
    main()
