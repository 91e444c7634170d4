"""Is a bot's move worth changing?  A paired rollout check at one kind of decision
(docs/BOT_STUDIES.md, "Where a search could act at two seats").

The bot (``--bot``, default ``closer``) plays itself; at each decision of the kind asked
for it plays its own move and one alternative in ``--worlds`` worlds, each the true state
with the stock reshuffled (the hands as they are: more than a fair bot knows, so an upper
bound on what a search over these two moves could find), every seat then playing on as
the bot (its memory copied) to the end of the round.  One JSON line per decision: the
facts of the moment and ``gain`` = the bot's round penalty minus the alternative's, per
world (positive: the alternative is better).  Kinds:

* ``dump``: closed, an opponent open, the bot's discard against the costliest card of
  another kind (shedding penalty instead of keeping the hand's chances);
* ``lay``: the bot lays its contract, against holding it a turn (its best discard);
* ``draw``: closed, the pile and the stock both legal: the other source.

``summary`` groups the lines' mean gain (and a 95 % normal half-width over decisions)::

    python -m bench.rollout_check run --kind dump --games 100 --worlds 16 --seed 1000 --out d.jsonl
    python -m bench.rollout_check summary d.jsonl --by opp,mb
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from clients.bots import make_bot
from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import missing, progress_action
from clients.bots.strong import live_outs
from clients.turn import engine_turn
from engine.actions import Action, Discard, Draw, LayContract
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet

_UNUSED = random.Random(0)  # the rule bots draw no random numbers
KINDS = ("dump", "lay", "draw")


def rollout(state: GameState, seat: int, action: Action, bots: Sequence[ExpertBot]) -> int:
    """``seat``'s round penalty if it plays ``action`` in ``state``, every seat then
    playing as (copies of) ``bots``."""
    players = [b.clone() for b in bots]
    players[seat].remember(action)
    number = state.round_number
    now, _ = state.apply_action(seat, action)
    while not now.is_terminal() and now.round_number == number:
        who = now.to_act[0]
        now, _, _ = engine_turn(now, who, players[who], _UNUSED)
    return now.scores[seat] - state.scores[seat]


def alternative(
    kind: str, sit: Situation, legal: Sequence[Action], move: Action, bot: ExpertBot
) -> tuple[Action, dict[str, Any]] | None:
    """The other move to try at a decision of ``kind`` and the facts to record (None:
    not such a decision)."""
    others = [s for s in range(sit.seats) if s != sit.seat]
    facts: dict[str, Any] = {
        "round": sit.round_number,
        "hand": len(sit.hand),
        "stock": sit.stock_size,
        "opp_open": any(sit.opened_seats[s] for s in others),
        "opp": min(sit.hand_sizes[s] for s in others if sit.opened_seats[s])
        if any(sit.opened_seats[s] for s in others)
        else 0,
    }
    penalty = sit.rules.penalty
    by_id = {c.id: c for c in sit.hand}
    if kind == "dump":
        if sit.phase != "play" or sit.opened or not facts["opp_open"]:
            return None
        if not isinstance(move, Discard) or progress_action(sit, legal) is not None:
            return None
        own = by_id[move.card]
        rest = [a for a in legal if isinstance(a, Discard) and by_id[a.card].kind != own.kind]
        if not rest:
            return None
        alt = max(rest, key=lambda a: (penalty(by_id[a.card]), -a.card))
        if penalty(by_id[alt.card]) <= penalty(own):
            return None
        facts["mb"] = missing(tuple(c for c in sit.hand if c is not own), sit)
        facts["ma"] = missing(tuple(c for c in sit.hand if c.id != alt.card), sit)
        facts["pb"], facts["pa"] = penalty(own), penalty(by_id[alt.card])
        return alt, facts
    if kind == "lay":
        if sit.phase != "play" or not isinstance(move, LayContract):
            return None
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return None
        return bot.ranked_discards(sit, discards)[0], facts
    if kind == "draw":
        top = sit.discard_top
        if sit.phase != "draw" or sit.opened or len(legal) != 2 or top is None:
            return None
        seen = bot.seen(sit)
        before, live = live_outs(sit.hand, sit, seen)
        after, live_after = live_outs((*sit.hand, top), sit, seen)
        assert isinstance(move, Draw)
        facts.update(
            took=move.source.value,
            top=penalty(top),
            missing=before,
            dm=after - before,
            dl=live_after - live,
        )
        return next(a for a in legal if a != move), facts
    raise ValueError(f"unknown kind {kind!r}")


def expert_players(bot: str, rules: RuleSet, seats: int) -> list[ExpertBot]:
    """``bot`` in every seat, set up; it must be ``expert``-based (clone, ranked_discards)."""
    players: list[ExpertBot] = []
    for s in range(seats):
        b = make_bot(bot, s)
        if not isinstance(b, ExpertBot):
            raise SystemExit(f"{bot}: an expert-based bot is needed (clone, ranked_discards)")
        b.setup(rules, s)
        players.append(b)
    return players


def check(
    rules: RuleSet, seats: int, bot: str, kind: str, games: int, worlds: int, seed: int
) -> Iterator[dict[str, Any]]:
    """One JSON-ready row per decision of ``kind`` in ``games`` games of ``bot``."""
    seats = seats or rules.min_players
    for g in range(seed, seed + games):
        players = expert_players(bot, rules, seats)
        state = GameState.new_game(rules, seats, f"check:{g}".encode())
        shuffler = random.Random(g)
        while not state.is_terminal():
            seat = state.to_act[0]
            legal = state.legal_actions(seat)
            sit = Situation.from_state(state, seat)
            trial = players[seat].clone()
            move = trial.choose(sit, legal, _UNUSED)
            found = alternative(kind, sit, legal, move, trial)
            if found is not None:
                alt, facts = found
                table = [trial if s == seat else players[s] for s in range(seats)]
                gains = []
                for _ in range(worlds):
                    stock = list(state.stock)
                    shuffler.shuffle(stock)
                    world = replace(state, stock=tuple(stock))
                    own = rollout(world, seat, move, table)
                    gains.append(own - rollout(world, seat, alt, table))
                yield {"game": g, **facts, "gain": sum(gains) / worlds, "gains": gains}
            state, _, _ = engine_turn(state, seat, players[seat], _UNUSED)


def summary(paths: Sequence[str], by: Sequence[str]) -> list[str]:
    rows = [json.loads(line) for p in paths for line in open(p)]  # noqa: SIM115
    groups: defaultdict[tuple[Any, ...], list[float]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in by)].append(r["gain"])
    out = [f"{len(rows)} decisions; by {', '.join(by)}: n, mean gain [95 %], better / worse %"]
    for key in sorted(groups, key=str):
        v = groups[key]
        mean = sum(v) / len(v)
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / max(1, len(v) - 1))
        half = 1.96 * sd / math.sqrt(len(v))
        better = 100 * sum(x > 0 for x in v) / len(v)
        worse = 100 * sum(x < 0 for x in v) / len(v)
        out.append(f"{key}: {len(v)}, {mean:+.2f} ± {half:.2f}, {better:.0f} / {worse:.0f}")
    return out


def check_parser(description: str, bot: str, games: int, seed: int) -> argparse.ArgumentParser:
    """The options a rollout check's command line shares (``bench/rollout_all.py`` too)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("mode", choices=("run", "summary"))
    parser.add_argument("paths", nargs="*", help="summary: the JSON lines files")
    parser.add_argument("--ruleset", default="whiskertrail", choices=sorted(PRESETS))
    parser.add_argument("--seats", type=int, default=0)
    parser.add_argument("--bot", default=bot)
    parser.add_argument("--games", type=int, default=games)
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--seed", type=int, default=seed)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = check_parser(__doc__.split("\n")[0], "closer", 20, 1000)
    parser.add_argument("--kind", default="dump", choices=KINDS)
    parser.add_argument("--out", default="-")
    parser.add_argument("--by", default="round", help="summary: comma-separated fields")
    args = parser.parse_args(argv)
    if args.mode == "summary":
        print("\n".join(summary(args.paths, args.by.split(","))))
        return
    sink = sys.stdout if args.out == "-" else open(args.out, "w")  # noqa: SIM115
    for row in check(
        PRESETS[args.ruleset], args.seats, args.bot, args.kind, args.games, args.worlds, args.seed
    ):
        sink.write(json.dumps(row) + "\n")
        sink.flush()


if __name__ == "__main__":
    main()
