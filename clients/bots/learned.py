"""``learned``: expert with closed-hand discards ranked by a linear model of rollout values.

Approximate policy iteration (issue 31): offline, without the play-time budget,
:mod:`clients.training.qvalues` plays ``expert`` games and, at each closed-hand discard,
values the candidates of :func:`discard_choices` (expert's best kinds leaving the fewest
``missing``; with a ``spread`` also the costliest leaving more) by rollouts to the end of
the round in the same worlds for every candidate (common random numbers): sampled as
``search`` samples them, or the true hidden hands with the stock reshuffled.  A linear
model of each candidate's features (:func:`discard_features`) is fitted to those values
centred per decision (the pairwise differences).  This bot plays expert, except that
among those candidates it throws the one the model values lowest when the model's
saving over expert's choice is at least ``margin`` points; likewise, with ``two_way``
weights (:func:`context_features`), it may pass a claim, switch pile and stock or hold
the contract.  :meth:`LearnedBot._overrule` applies a model to any base move (a second
step over a learned policy).

Cost: expert's solver calls plus a dot product per candidate (no search at play time).
With no weights for the table (the defaults: none) it is ``expert`` move for move; the
measured fits are the classes of :mod:`clients.bots.tried` (docs/BOTS.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot, capped_round
from clients.bots.greedy import fits_table, missing
from clients.bots.search import challenger, decision_kind
from clients.bots.strong import Kind, live_outs
from engine.actions import Action, Discard
from engine.cards import Card

__all__ = [
    "CONTEXT",
    "FEATURES",
    "LearnedBot",
    "context_features",
    "discard_candidates",
    "discard_choices",
    "discard_features",
]

FEATURES: tuple[str, ...] = (
    "missing",
    "live",
    "fits",
    "penalty",
    "joker",
    "twin",
    "penalty_late",
    "live_late",
    "fits_late",
    "same_rank",
    "suit_near",
    "stock",
    "penalty_stock",
    "missing_late",
    "missing_stock",
)


def discard_candidates(
    sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]
) -> list[tuple[Discard, Card, int, int]]:
    """One discard per card kind of the hand: (action, card, missing, live outs) of the
    hand it leaves, fewest missing first."""
    by_id = {c.id: c for c in sit.hand}
    judged: dict[Kind, tuple[Discard, Card, int, int]] = {}
    for action in discards:
        c = by_id[action.card]
        if c.kind in judged:
            continue
        rest = tuple(x for x in sit.hand if x is not c)
        judged[c.kind] = (action, c, *live_outs(rest, sit, seen))
    return sorted(judged.values(), key=lambda t: (t[2], -t[3], t[1].id))


def discard_choices(
    sit: Situation,
    discards: Sequence[Discard],
    chosen: Discard,
    bot: ExpertBot,
    spread: int = 0,
    kinds: int | None = 4,
    wide: int = 2,
) -> list[tuple[Discard, list[float]]]:
    """The closed-hand discards the model weighs, each with its features, expert's choice
    ``chosen`` first: expert's ``kinds`` best kinds among those leaving the fewest
    ``missing`` and, with a ``spread``, the ``wide`` costliest leaving up to ``spread``
    more (``kinds`` None: every kind within ``spread``, as the first variants chose).  The
    recorder values exactly these and the bot chooses among exactly these, so the model
    never judges a candidate unlike those it was fitted on.  Empty when there is no
    choice."""
    options = discard_candidates(sit, discards, bot.seen(sit))
    fewest = options[0][2]
    by_id = {c.id: c for c in sit.hand}
    mine = by_id[chosen.card].kind
    info = {c.kind: (c, m, live) for _, c, m, live in options if m <= fewest + spread}
    if mine not in info or len(info) < 2:
        return []
    ranked = [a for a in bot.ranked_discards(sit, discards) if by_id[a.card].kind in info]
    near = [a for a in ranked if info[by_id[a.card].kind][1] == fewest]
    rest = [a for a in near if by_id[a.card].kind != mine][: None if kinds is None else kinds - 1]
    # a wider look: the costliest cards whose discard leaves more missing
    further = [a for a in ranked if info[by_id[a.card].kind][1] > fewest]
    further.sort(key=lambda a: -sit.rules.penalty(by_id[a.card]))
    picked = [chosen, *rest, *further[: None if kinds is None else wide]]
    return [(a, discard_features(sit, *info[by_id[a.card].kind])) for a in picked]


def discard_features(sit: Situation, c: Card, missing: int, live: int) -> list[float]:
    """The model's inputs for discarding ``c`` from a closed hand (order: FEATURES)."""
    late = 1.0 if any(o for s, o in enumerate(sit.opened_seats) if s != sit.seat) else 0.0
    penalty = sit.rules.penalty(c) / 10
    fits = 1.0 if sit.table and fits_table(c, sit) else 0.0
    twin = same = near = 0
    for x in sit.hand:
        if x is c or x.is_joker or c.is_joker:
            continue
        if x.kind == c.kind:
            twin = 1
        elif x.rank == c.rank:
            same += 1
        elif x.suit == c.suit and abs(x.rank - c.rank) <= 2:
            near += 1
    stock = min(sit.stock_size, 60) / 60
    return [
        float(missing),
        live / 10,
        fits,
        penalty,
        1.0 if c.is_joker else 0.0,
        float(twin),
        penalty * late,
        live / 10 * late,
        fits * late,
        float(same),
        float(near),
        stock,
        penalty * (1 - stock),
        missing * late,
        missing * (1 - stock),
    ]


CONTEXT: tuple[str, ...] = (
    "bias",
    "late",
    "opponents_open",
    "stock",
    "hand_size",
    "hand_penalty",
    "missing",
    "missing_with_top",
    "top_penalty",
    "top_fits",
    "round",
)


def context_features(sit: Situation) -> list[float]:
    """The inputs of a two-way decision's model (claim or pass, pile or stock, lay the
    contract or hold it): the gain of the challenger over expert's move is linear in
    these (order: CONTEXT)."""
    others = [o for s, o in enumerate(sit.opened_seats) if s != sit.seat]
    top = sit.discard_top
    now = missing(sit.hand, sit)
    with_top = missing((*sit.hand, top), sit) if top is not None else now
    return [
        1.0,
        1.0 if any(others) else 0.0,
        sum(others) / max(1, len(others)),
        min(sit.stock_size, 60) / 60,
        len(sit.hand) / 10,
        sum(sit.rules.penalty(c) for c in sit.hand) / 100,
        float(min(now, 4)),
        float(min(with_top, 4)),
        sit.rules.penalty(top) / 10 if top is not None else 0.0,
        1.0 if top is not None and sit.table and fits_table(top, sit) else 0.0,
        sit.round_number / 7,
    ]


#: fitted weights per (rule set, seats): the discard ranking (FEATURES, points of round
#: penalty per unit) and each two-way decision's challenger saving (CONTEXT)
WEIGHTS: dict[tuple[str, int], tuple[float, ...]] = {}
TWO_WAY: dict[tuple[str, str, int], tuple[float, ...]] = {}


class LearnedBot(ExpertBot):
    name = "learned"
    margin: float = 0.0  # points the model must save over expert's discard to overrule it
    spread: int = 0  # also weigh discards leaving up to this many more missing
    kinds: int | None = 4  # expert's best this many kinds of those leaving the fewest missing
    wide: int = 2  # the costliest this many leaving more (with a spread)
    two_way_margin: float = 1.0  # ... over expert's claim, draw or lay
    weights: dict[tuple[str, int], tuple[float, ...]] = WEIGHTS
    two_way: dict[tuple[str, str, int], tuple[float, ...]] = TWO_WAY

    def _decide(self, sit: Situation, legal: Sequence[Action]) -> Action:
        action = super()._decide(sit, legal)
        if capped_round(sit):
            return action
        other = challenger(sit, legal, action, self)
        if other is None:
            return action
        w = self.two_way.get((decision_kind(action), sit.rules.name, sit.seats))
        if w is None:
            return action
        gain = sum(a * b for a, b in zip(w, context_features(sit), strict=True))
        return other if gain >= self.two_way_margin else action

    def _closed_discard(
        self, sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]
    ) -> Discard:
        expert = super()._closed_discard(sit, discards, seen)
        return self._overrule(sit, discards, expert, self.weights, self.margin, self.kinds)

    def _overrule(
        self,
        sit: Situation,
        discards: Sequence[Discard],
        chosen: Discard,
        weights: dict[tuple[str, int], tuple[float, ...]],
        margin: float,
        kinds: int | None,
    ) -> Discard:
        """``chosen`` unless the model of ``weights`` values another candidate (of
        :func:`discard_choices` with ``kinds``) at least ``margin`` points lower."""
        w = weights.get((sit.rules.name, sit.seats))
        if w is None:
            return chosen
        choices = discard_choices(sit, discards, chosen, self, self.spread, kinds, self.wide)
        if not choices:
            return chosen
        values = [sum(a * b for a, b in zip(w, f, strict=True)) for _, f in choices]
        best = min(range(len(values)), key=values.__getitem__)
        if best == 0 or values[0] - values[best] < margin:
            return chosen
        return choices[best][0]
