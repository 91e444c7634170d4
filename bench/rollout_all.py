"""Is any move worth changing?  A paired rollout check of every alternative at a decision
(docs/BOT_STUDIES.md, "Every alternative at two seats").

``bench/rollout_check.py`` tries one alternative at one kind of decision.  This check
tries them all: the bot (``--bot``, default ``expert``) plays itself, and at each of its
decisions (both seats, every round) it plays its own move and every other legal move,
one per distinct move (twin cards play alike: a discard per card kind, a lay-off per
card kind, meld and end), in ``--worlds`` worlds.  A world is the true state with the
stock reshuffled (the hands as they are: more than a fair bot knows, so an upper bound
on what a search could find), and every move is played in the *same* worlds (common
random numbers: the paired difference carries no noise from the stock's draw between
the moves), each to the end of the round with every seat playing the bot (its memory
copied).  A move that empties the hand is not rolled out: going out scores 0, which no
other move can beat.

One JSON line per decision: its class (``draw`` / ``discard`` / ``lay`` / ``layoff`` /
``extra``, the bot's move, and ``closed`` / ``open``), the facts of the moment, and per
alternative its gains per world (the bot's round penalty minus the alternative's:
positive, the alternative is better).  ``summary`` gives, per class and the facts asked
for, the decisions, how many a seat-game (of the games played to their end), and per
decision (mean over decisions ± standard error):

* ``cv``: what a search that knew the hands would save: on one half of the worlds it
  picks the alternative with the largest mean gain (the bot's move unless one is ahead
  by more than ``--margin``), and is scored on the other half (then the halves swap);
* ``max``: the largest alternative's mean gain over all worlds, or 0 (biased upwards:
  the largest of several noisy means);
* ``sig``: the share of decisions where some alternative saves ≥ 3 points at 2 standard
  errors;
* ``spread``: the standard deviation of the alternatives' true mean gains (the worlds'
  noise taken out, from the halves' product);
* ``fair`` (``--fair`` rows): a fair search's saving: it picks in ``--worlds`` worlds
  sampled from what the seat knows and is scored in the true worlds::

    python -m bench.rollout_all run --games 6 --seed 9288 --worlds 16 --out a.jsonl
    python -m bench.rollout_all run --worlds 32 --every 4 --classes discard-closed --fair
    python -m bench.rollout_all summary a.jsonl --by cls
"""

from __future__ import annotations

import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from bench.rollout_check import check_parser, expert_players, rollout
from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import missing
from clients.bots.search import sample_world
from clients.bots.tracking import TableMemory
from clients.turn import engine_turn
from engine.actions import Action, Discard, Draw, ExtraMeld, LayContract, LayOff
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet

_UNUSED = random.Random(0)  # the rule bots draw no random numbers


def move_key(action: Action, sit: Situation) -> tuple[Any, ...]:
    """Moves with one key play alike (twin cards)."""
    kinds = {c.id: c.kind for c in sit.hand}
    if isinstance(action, Discard):
        return ("discard", kinds[action.card])
    if isinstance(action, LayOff):
        return ("layoff", kinds[action.card], action.meld, str(action.end))
    if isinstance(action, ExtraMeld):
        return ("extra", tuple(sorted(kinds[i] for i in action.meld.cards)))
    return (type(action).__name__, repr(action))


def move_class(action: Action, sit: Situation) -> str | None:
    """The decision's class by the bot's move (None: nothing to compare)."""
    state = "open" if sit.opened else "closed"
    if isinstance(action, Draw):
        return f"draw-{state}"
    names = {Discard: "discard", LayContract: "lay", LayOff: "layoff", ExtraMeld: "extra"}
    name = names.get(type(action))
    return None if name is None else f"{name}-{state}"


def empties(state: GameState, seat: int, action: Action) -> bool:
    after, _ = state.apply_action(seat, action)
    return after.round_number != state.round_number or after.is_terminal() or not after.hands[seat]


def facts_of(sit: Situation) -> dict[str, Any]:
    others = [s for s in range(sit.seats) if s != sit.seat]
    open_sizes = [sit.hand_sizes[s] for s in others if sit.opened_seats[s]]
    return {
        "round": sit.round_number,
        "hand": len(sit.hand),
        "stock": sit.stock_size,
        "opp": min(open_sizes) if open_sizes else 0,  # 0: no opponent open
        "mb": missing(sit.hand, sit) if not sit.opened and sit.phase == "play" else -1,
    }


def check(
    rules: RuleSet,
    seats: int,
    bot: str,
    games: int,
    worlds: int,
    seed: int,
    every: int,
    classes: Sequence[str] = (),
    fair: bool = False,
) -> Iterator[dict[str, Any]]:
    """One JSON-ready row per decision with alternatives in ``games`` games of ``bot``
    (every ``every``-th such decision; of ``classes`` only, when given).  ``fair``: each
    move is also played in ``worlds`` worlds sampled from what the seat knows
    (``search``'s :func:`sample_world`: its hand, the table, the pile as it watched it,
    the cards it saw the opponent take, the sizes; the rest of the cards dealt at random),
    their gains ``picks`` beside the true worlds' ``gains``."""
    seats = seats or rules.min_players
    for g in range(seed, seed + games):
        players = expert_players(bot, rules, seats)
        state = GameState.new_game(rules, seats, f"check:{g}".encode())
        memories = [TableMemory() for _ in range(seats)]
        n = 0
        while not state.is_terminal():
            seat = state.to_act[0]
            legal = state.legal_actions(seat)
            sit = Situation.from_state(state, seat)
            memories[seat].observe(sit)
            trial = players[seat].clone()
            move = trial.choose(sit, legal, _UNUSED)
            cls = move_class(move, sit)
            own = move_key(move, sit)
            alts: dict[tuple[Any, ...], Action] = {}
            for a in legal:
                k = move_key(a, sit)
                if k != own and k not in alts:
                    alts[k] = a
            wanted = cls is not None and (not classes or cls in classes)
            if wanted and alts and not empties(state, seat, move):
                n += 1
                if n % every == 0:
                    table = [trial if s == seat else players[s] for s in range(seats)]
                    row = {
                        "game": g,
                        "n": n,
                        "seat": seat,
                        "cls": cls,
                        "move": str(own),
                        **facts_of(sit),
                        "alts": _compare(
                            _true_worlds(state, worlds, f"{g}:{n}"), seat, move, alts, table
                        ),
                    }
                    if fair:
                        sampler = random.Random(f"fair:{g}:{n}")
                        sampled = [
                            sample_world(sit, memories[seat], sampler) for _ in range(worlds)
                        ]
                        picks = _compare(
                            [w for w in sampled if w is not None], seat, move, alts, table
                        )
                        for a, p in zip(row["alts"], picks, strict=True):
                            a["picks"] = p["gains"]
                    yield row
            state, action, _ = engine_turn(state, seat, players[seat], _UNUSED)
            if isinstance(action, Discard):
                memories[seat].discarded(action.card)
        yield {"game": g, "done": True, "decisions": n, "seats": seats}


def _true_worlds(state: GameState, worlds: int, name: str) -> list[GameState]:
    """The true state with the stock reshuffled, ``worlds`` times."""
    shuffler = random.Random(f"worlds:{name}")
    out = []
    for _ in range(worlds):
        stock = list(state.stock)
        shuffler.shuffle(stock)
        out.append(replace(state, stock=tuple(stock)))
    return out


def _compare(
    stocks: Sequence[GameState],
    seat: int,
    move: Action,
    alts: dict[tuple[Any, ...], Action],
    table: Sequence[ExpertBot],
) -> list[dict[str, Any]]:
    """Per alternative, its gains over ``move`` in each of the worlds ``stocks``."""
    base = [rollout(w, seat, move, table) for w in stocks]
    out = []
    for key, alt in alts.items():
        if stocks and empties(stocks[0], seat, alt):
            gains = [float(b) for b in base]  # out: 0 points
        else:
            gains = [
                float(b - rollout(w, seat, alt, table)) for b, w in zip(base, stocks, strict=True)
            ]
        out.append({"key": str(key), "type": type(alt).__name__, "gains": gains})
    return out


def _mean(v: Sequence[float]) -> float:
    return sum(v) / len(v) if v else 0.0


def _se(v: Sequence[float]) -> float:
    if len(v) < 2:
        return 0.0
    m = _mean(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v))


def savings(alts: Sequence[dict[str, Any]], margin: float = 0.0) -> tuple[float, float, bool]:
    """(cv, max, sig) of one decision (the module's docstring)."""
    gains = [a["gains"] for a in alts]
    w = len(gains[0])
    halves = (list(range(0, w, 2)), list(range(1, w, 2)))
    cv = 0.0
    for pick, score in (halves, halves[::-1]):
        means = [_mean([g[i] for i in pick]) for g in gains]
        best = max(range(len(gains)), key=means.__getitem__)
        if means[best] > margin:
            cv += _mean([gains[best][i] for i in score]) / 2
    full = [_mean(g) for g in gains]
    top = max(full)
    sig = any(_mean(g) >= 3 and _mean(g) >= 2 * _se(g) for g in gains)
    return cv, max(0.0, top), sig


def fair_saving(alts: Sequence[dict[str, Any]], margin: float = 0.0) -> float | None:
    """A fair search's saving at one decision: the alternative with the largest mean
    gain in the sampled worlds (``picks``; the bot's move unless one is ahead by more
    than ``margin``), scored in the true worlds (None: no sampled worlds)."""
    if not alts or not alts[0].get("picks"):
        return None
    best = max(alts, key=lambda a: _mean(a["picks"]))
    return _mean(best["gains"]) if _mean(best["picks"]) > margin else 0.0


def spread(pairs: Sequence[tuple[float, float]]) -> float:
    """The standard deviation of the alternatives' true mean gains, the worlds' noise
    taken out: the two halves' means are independent given the true mean, so the mean
    of their product estimates its mean square."""
    if not pairs:
        return 0.0
    square = _mean([a * b for a, b in pairs])
    mean = _mean([(a + b) / 2 for a, b in pairs])
    return math.sqrt(max(0.0, square - mean * mean))


def summary(paths: Sequence[str], by: Sequence[str], margin: float) -> list[str]:
    rows = [json.loads(line) for p in paths for line in open(p)]  # noqa: SIM115
    done = [r for r in rows if r.get("done")]
    seat_games = max(1, sum(r["seats"] for r in done))
    finished = {r["game"] for r in done}  # a game stopped short: no share of its decisions
    rows = [r for r in rows if not r.get("done") and r["alts"]]
    shares: defaultdict[tuple[Any, ...], int] = defaultdict(int)
    for r in rows:
        shares[tuple(r[k] for k in by)] += r["game"] in finished
    groups: defaultdict[tuple[Any, ...], list[tuple[float, float, bool]]] = defaultdict(list)
    types: defaultdict[tuple[Any, ...], defaultdict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    halves: defaultdict[tuple[Any, ...], list[tuple[float, float]]] = defaultdict(list)
    fairs: defaultdict[tuple[Any, ...], list[float]] = defaultdict(list)
    for r in rows:
        key = tuple(r[k] for k in by)
        groups[key].append(savings(r["alts"], margin))
        fair = fair_saving(r["alts"], margin)
        if fair is not None:
            fairs[key].append(fair)
        for a in r["alts"]:
            types[key][a["type"]].append(_mean(a["gains"]))
            halves[key].append((_mean(a["gains"][0::2]), _mean(a["gains"][1::2])))
    out = [
        f"{len(rows)} decisions, {len(done)} games finished ({seat_games} seat-games); by "
        f"{', '.join(by)}: n, per seat-game, cv ± se, max ± se, sig %, spread; gain by alt type"
    ]
    for key in sorted(groups, key=str):
        v = groups[key]
        cv = [x[0] for x in v]
        mx = [x[1] for x in v]
        sig = 100 * sum(x[2] for x in v) / len(v)
        alt = ", ".join(f"{t} {_mean(g):+.1f} ({len(g)})" for t, g in sorted(types[key].items()))
        f = fairs.get(key)
        if f:
            alt += f"; fair {_mean(f):+.2f} ± {_se(f):.2f}"
        out.append(
            f"{key}: {len(v)}, {shares[key] / seat_games:.2f}, {_mean(cv):+.2f} ± {_se(cv):.2f}, "
            f"{_mean(mx):+.2f} ± {_se(mx):.2f}, {sig:.0f} %, {spread(halves[key]):.1f}; {alt}"
        )
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = check_parser(__doc__.split("\n")[0], "expert", 6, 9288)
    parser.add_argument("--every", type=int, default=1, help="check every n-th decision")
    parser.add_argument("--classes", default="", help="only these (comma-separated)")
    parser.add_argument("--fair", action="store_true", help="also pick in sampled worlds")
    parser.add_argument("--out", default="-")
    parser.add_argument("--by", default="cls", help="summary: comma-separated fields")
    parser.add_argument("--margin", type=float, default=0.0, help="summary: cv's margin")
    args = parser.parse_args(argv)
    if args.mode == "summary":
        print("\n".join(summary(args.paths, args.by.split(","), args.margin)))
        return
    sink = sys.stdout if args.out == "-" else open(args.out, "w")  # noqa: SIM115
    rules = PRESETS[args.ruleset]
    classes = [c for c in args.classes.split(",") if c]
    for row in check(
        rules,
        args.seats,
        args.bot,
        args.games,
        args.worlds,
        args.seed,
        args.every,
        classes,
        args.fair,
    ):
        sink.write(json.dumps(row) + "\n")
        sink.flush()


if __name__ == "__main__":
    main()
