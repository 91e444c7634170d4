"""Rollout values of expert's decisions, and a linear model fitted to them.

Approximate policy iteration (issue 31; :mod:`clients.bots.learned` plays the result).
``generate`` plays games with ``--policy`` (``expert``) in every seat; at a seat's
closed-hand discard (not in contract's rounds of groups only, which the turn cap ends)
it takes the candidates of :func:`clients.bots.learned.discard_choices` (``--spread``:
also discards leaving more ``missing``), and at the two-way decisions ``search`` weighs
(:func:`clients.bots.search.challenger`) the policy's move and its challenger, and plays
each in the same ``worlds`` to the end of the round, the policy in every seat, scoring
the seat's round penalty.  Worlds are sampled from what the seat has seen
(:func:`clients.bots.search.sample_world`) or, ``--truth``, the true state with the
stock reshuffled and every seat's own bot; ``--compare`` records both.  The policy's
move is played in the game itself, so the decisions are those it meets.  One JSON line
per decision: its kind, the candidates' features and their values per world (the
policy's first).

``fit`` solves ridge least squares for weights ``w`` with ``features · w`` ≈ value,
centred within each decision for discards (the pairwise differences), and
cross-validates the saving over the policy's move of overruling it above a margin;
``compare`` measures how sampled worlds' values agree with the true hands'::

    python -m clients.training.qvalues generate --ruleset whiskertrail --seats 4 \
        --games 2 --seed 9220 --worlds 8 --truth --spread 1 --out w4.jsonl
    python -m clients.training.qvalues fit w4.jsonl --spread 0
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from clients.bots import resolve
from clients.bots.base import Situation
from clients.bots.expert import ExpertBot, capped_round
from clients.bots.learned import (
    CONTEXT,
    FEATURES,
    context_features,
    discard_choices,
)
from clients.bots.search import SearchBot, decision_kind, sample_world
from clients.turn import engine_turn
from engine.actions import Action, Discard
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet

__all__ = ["Recorder", "compare", "fit", "generate"]


class Recorder(SearchBot):
    """Plays ``expert``; at closed-hand discards records every candidate's rollout values."""

    name = "recorder"
    max_kinds = 4
    discards = True  # record closed-hand discards (else the two-way decisions only)
    spread = 0  # discards leaving up to this many more missing than the fewest ...
    wide = 2  # ... at most this many of them, the costliest first
    compare = False  # with truth: also record the values in sampled worlds ("sampled")

    def __init__(
        self, seed: int, out: TextIO, worlds: int, policy: type[ExpertBot] = ExpertBot
    ) -> None:
        super().__init__(seed)
        self.base = policy(seed)  # the policy played and rolled out (expert: step one)
        self.out = out
        self.worlds = worlds
        self._feats: list[list[float]] = []
        self._kind = "discard"
        self.recorded = 0
        #: the true state and every seat's recorder, when values come from the hidden
        #: hands as they are (the stock reshuffled) rather than from sampled worlds
        self.truth: tuple[GameState, Sequence[Recorder]] | None = None

    def candidates(
        self, sit: Situation, legal: Sequence[Action], base_action: Action, base: ExpertBot
    ) -> list[Action]:
        self._kind = "discard"
        if (
            sit.phase != "play"
            or sit.opened
            or capped_round(sit)
            or not isinstance(base_action, Discard)
        ):
            found = super().candidates(sit, legal, base_action, base)
            if len(found) != 2 or decision_kind(found[0]) == "discard":
                return []
            self._kind = decision_kind(found[0])
            self._feats = [context_features(sit)]
            return found
        if not self.discards:
            return []
        discards = [a for a in legal if isinstance(a, Discard)]
        choices = discard_choices(
            sit, discards, base_action, base, self.spread, self.max_kinds, self.wide
        )
        self._feats = [f for _, f in choices]
        return [a for a, _ in choices]

    def _reshuffled(self, state: GameState) -> GameState:
        """The true state with the stock in a random order (and new reshuffles): the
        hidden hands as they are, the future drawn afresh."""
        stock = list(state.stock)
        self.random.shuffle(stock)
        seed = self.random.getrandbits(64).to_bytes(8, "big")
        return dataclasses.replace(state, stock=tuple(stock), seed=seed)

    def _values(
        self,
        sit: Situation,
        candidates: Sequence[Action],
        base: ExpertBot,
        truth: tuple[GameState, Sequence[Recorder]] | None,
    ) -> list[list[float]]:
        """Each candidate's round penalty in each world: sampled worlds, or the true state
        with the stock reshuffled (``truth``)."""
        values: list[list[float]] = [[] for _ in candidates]
        for _ in range(self.worlds):
            if truth is None:
                world = sample_world(sit, self.memory, self.random)
                others = None
            else:
                world = self._reshuffled(truth[0])
                others = [bot.base for bot in truth[1]]
            if world is None:
                break
            for i, action in enumerate(candidates):
                values[i].append(self._rollout(world, sit.seat, action, base, others))
        return values

    def _search(self, sit: Situation, candidates: Sequence[Action], base: ExpertBot) -> Action:
        values = self._values(sit, candidates, base, self.truth)
        if values[0]:
            row: dict[str, Any] = {
                "kind": self._kind,
                "rules": sit.rules.name,
                "seats": sit.seats,
                "round": sit.round_number,
                "features": self._feats,
                "values": values,
            }
            if self.compare and self.truth is not None:
                row["sampled"] = self._values(sit, candidates, base, None)
            self.out.write(json.dumps(row) + "\n")
            self.out.flush()
            self.recorded += 1
        return candidates[0]


def generate(
    rules: RuleSet,
    seats: int,
    games: int,
    seed: int,
    worlds: int,
    out: TextIO,
    every: int = 1,
    discards: bool = True,
    spread: int = 0,
    truth: bool = False,
    policy: type[ExpertBot] = ExpertBot,
    compare: bool = False,
) -> dict[str, float]:
    """Play ``games`` expert games from ``seed`` on, recording each seat's closed discards
    (every ``every``-th of them, by the seat's decision count)."""
    started = time.process_time()
    recorded = rollouts = 0
    for g in range(games):
        bots = [Recorder(seed * 100 + g * 10 + s, out, worlds, policy) for s in range(seats)]
        for s, b in enumerate(bots):
            b.setup(rules, s)
            b.discards = discards
            b.spread = spread
            b.compare = compare
        state = GameState.new_game(rules, seats, f"qvalues:{seed}:{g}".encode())
        rng = random.Random(g)
        while not state.is_terminal():
            seat = state.to_act[0]
            bot = bots[seat]
            bot.worlds = worlds if bot.decisions % every == 0 else 0
            if truth:
                bot.truth = (state, bots)
            state, _, _ = engine_turn(state, seat, bot, rng)
        recorded += sum(b.recorded for b in bots)
        rollouts += sum(b.rollouts for b in bots)
    cpu = time.process_time() - started
    return {"decisions": recorded, "rollouts": rollouts, "cpu_s": round(cpu, 1)}


def _load(paths: Sequence[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        with path.open() as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


#: the predicted savings (points) from which the model overrules expert, as evaluated
MARGINS = (0.0, 1.0, 2.0, 4.0)


def fit(
    rows: Sequence[dict[str, Any]], ridge: float = 1.0, folds: int = 5, spread: int | None = None
) -> dict[str, Any]:
    """Per kind of decision, weights from all its rows, and by ``folds``-fold cross-
    validation (contiguous blocks: games apart) for each margin of :data:`MARGINS`: the
    share of decisions where the model overrules expert and the mean rollout saving over
    expert's move per decision (positive: the model's choice lost fewer points), with its
    standard error.  Discards: ``features · w`` ≈ value, both centred within each
    decision (a ranking); two-way decisions (claim, draw, lay): ``context · w`` ≈ the
    challenger's saving.  ``spread``: keep only the discards leaving at most that many more
    ``missing`` than expert's (None: every candidate recorded)."""
    out: dict[str, Any] = {}
    if spread is not None:
        rows = [_narrow(r, spread) for r in rows]
    for kind in ("discard", "claim", "draw", "lay"):
        mine = [r for r in rows if r.get("kind", "discard") == kind]
        mine = [r for r in mine if len(r["values"]) > 1]
        if len(mine) >= 2 * folds:
            out[kind] = _fit_kind(mine, kind == "discard", ridge, folds)
    return out


def _narrow(row: dict[str, Any], spread: int) -> dict[str, Any]:
    """A discard row without the candidates leaving more than ``spread`` more missing."""
    if row.get("kind", "discard") != "discard":
        return row
    at = FEATURES.index("missing")
    fewest = row["features"][0][at]
    keep = [i for i, f in enumerate(row["features"]) if f[at] <= fewest + spread]
    return {
        **row,
        "features": [row["features"][i] for i in keep],
        "values": [row["values"][i] for i in keep],
    }


def _weights(rows: Sequence[dict[str, Any]], ranking: bool, ridge: float) -> np.ndarray[Any, Any]:
    xs, ys = [], []
    for row in rows:
        x, q = _arrays(row)
        if ranking:
            xs.append(x - x.mean(axis=0))
            ys.append(q - q.mean())
        else:
            xs.append(x)
            ys.append(q[:1] - q[1:])
    x_all, y_all = np.concatenate(xs), np.concatenate(ys)
    eye = ridge * np.eye(x_all.shape[1])
    return np.asarray(np.linalg.solve(x_all.T @ x_all + eye, x_all.T @ y_all))


def _fit_kind(
    rows: Sequence[dict[str, Any]], ranking: bool, ridge: float, folds: int
) -> dict[str, Any]:
    savings: dict[float, list[float]] = {m: [] for m in MARGINS}
    for k in range(folds):
        lo, hi = len(rows) * k // folds, len(rows) * (k + 1) // folds
        w = _weights([*rows[:lo], *rows[hi:]], ranking, ridge)
        for row in rows[lo:hi]:
            x, q = _arrays(row)
            if ranking:
                pred = x @ w
                pick, gain = int(np.argmin(pred)), float(pred[0] - pred.min())
            else:
                pick, gain = 1, float(x[0] @ w)
            for m in MARGINS:
                chosen = pick if gain > m else 0
                savings[m].append(float(q[0] - q[chosen]))
    names = FEATURES if ranking else CONTEXT
    hindsight = [float(_arrays(r)[1][0] - _arrays(r)[1].min()) for r in rows]
    gains = [float(_arrays(r)[1][0] - _arrays(r)[1][1:].mean()) for r in rows]
    return {
        "decisions": len(rows),
        "weights": {
            n: round(float(v), 3)
            for n, v in zip(names, _weights(rows, ranking, ridge), strict=True)
        },
        "mean_gain_of_others": round(float(np.mean(gains)), 2),
        "best_in_hindsight": round(float(np.mean(hindsight)), 2),
        "cross_validated": {
            f"margin {m:g}": {
                "overruled": round(float(np.mean([s != 0 for s in v])), 3),
                "saving": round(float(np.mean(v)), 3),
                "se": round(float(np.std(v) / np.sqrt(len(v))), 3),
            }
            for m, v in savings.items()
        },
    }


def _arrays(row: dict[str, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A row's features and its candidates' mean values (expert's first).  A discard row
    recorded before the last features were added is padded with zeros: those are
    products of ``missing``, the same for every candidate of such a row (fewest missing
    only), so centred they are zero."""
    x = np.asarray(row["features"], dtype=np.float64)
    if row.get("kind", "discard") == "discard" and x.shape[1] < len(FEATURES):
        x = np.pad(x, ((0, 0), (0, len(FEATURES) - x.shape[1])))
    q = np.asarray(row["values"], dtype=np.float64).mean(axis=1)
    return x, q


def compare(rows: Sequence[dict[str, Any]], kind: str = "discard") -> dict[str, float]:
    """How far sampled worlds' values agree with the true hands' on the same decisions of
    ``kind``: per challenger, its saving over expert's move both ways; their correlation,
    each estimate's split-half reliability (the share of it that is signal, Spearman-
    Brown over the two halves of the worlds) and the correlation corrected for both
    noises; the share put on the same side of expert's move; and the saving of the
    sampled worlds' pick measured by the true hands (what a search in them gets)."""
    pairs: list[tuple[float, ...]] = []
    picked: list[float] = []
    for row in rows:
        if "sampled" not in row or row.get("kind", "discard") != kind:
            continue
        true = np.asarray(row["values"], dtype=np.float64)
        seen = np.asarray(row["sampled"], dtype=np.float64)
        if min(true.shape[1], seen.shape[1]) < 2:
            continue
        for i in range(1, len(true)):
            t, v = true[0] - true[i], seen[0] - seen[i]
            ht, hv = len(t) // 2, len(v) // 2
            pairs.append(
                (t.mean(), v.mean(), t[:ht].mean(), t[ht:].mean(), v[:hv].mean(), v[hv:].mean())
            )
        picked.append(float(true[0].mean() - true[int(np.argmin(seen.mean(axis=1)))].mean()))
    if len(pairs) < 3:
        return {"decisions": 0}
    t, v, t1, t2, v1, v2 = np.asarray(pairs).T
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant column: nan
        r = float(np.corrcoef(t, v)[0, 1])
        rt, rv = (_reliability(a, b) for a, b in ((t1, t2), (v1, v2)))
    return {
        "decisions": len(picked),
        "challengers": len(pairs),
        "correlation": round(r, 3),
        "reliability_true": round(rt, 3),
        "reliability_sampled": round(rv, 3),
        "corrected": round(r / np.sqrt(rt * rv), 3) if rt > 0 and rv > 0 else float("nan"),
        "same_side": round(float(np.mean(np.sign(t) == np.sign(v))), 3),
        "sampled_pick_true_saving": round(float(np.mean(picked)), 3),
        "se": round(float(np.std(picked) / np.sqrt(len(picked))), 3),
    }


def _reliability(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    """Spearman-Brown: the reliability of the mean of two halves that correlate so."""
    r = float(np.corrcoef(a, b)[0, 1])
    return 2 * r / (1 + r)


def _policy(spec: str) -> type[ExpertBot]:
    found = resolve(spec)
    if not issubclass(found, ExpertBot):
        raise SystemExit(f"--policy {spec}: not an expert-based bot")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--ruleset", default="contract", choices=sorted(PRESETS))
    gen.add_argument("--seats", type=int, default=4)
    gen.add_argument("--games", type=int, default=1)
    gen.add_argument("--seed", type=int, default=9200)
    gen.add_argument("--worlds", type=int, default=8)
    gen.add_argument("--every", type=int, default=1)
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--no-discards", action="store_true", help="two-way decisions only")
    gen.add_argument("--policy", default="expert", help="the bot played and rolled out")
    gen.add_argument("--compare", action="store_true", help="with --truth: sampled values too")
    gen.add_argument("--truth", action="store_true", help="the hidden hands as they are")
    gen.add_argument("--spread", type=int, default=0, help="discards up to N more missing")
    fitter = sub.add_parser("fit")
    fitter.add_argument("paths", type=Path, nargs="+")
    fitter.add_argument("--ridge", type=float, default=1.0)
    fitter.add_argument("--folds", type=int, default=5)
    fitter.add_argument("--spread", type=int, default=None, help="discards up to N more missing")
    comparer = sub.add_parser("compare")
    comparer.add_argument("paths", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "generate":
        with args.out.open("a") as out:
            report = generate(
                PRESETS[args.ruleset],
                args.seats,
                args.games,
                args.seed,
                args.worlds,
                out,
                args.every,
                not args.no_discards,
                args.spread,
                args.truth,
                _policy(args.policy),
                args.compare,
            )
        print(json.dumps(report))
    elif args.command == "compare":
        rows = _load(args.paths)
        print(json.dumps({k: compare(rows, k) for k in ("discard", "claim", "draw", "lay")}))
    else:
        print(json.dumps(fit(_load(args.paths), args.ridge, args.folds, args.spread), indent=1))


if __name__ == "__main__":
    main()
