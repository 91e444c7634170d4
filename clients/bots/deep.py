"""``deep``: ``expert`` with a two-draw look at its closed-hand discards.

``expert`` (after ``strong``) ranks the closed-hand discards that leave the fewest
``missing`` by their *live outs*: the unseen copies of the card kinds whose next draw
lowers ``missing``, the odds of the next draw.  That is one ply.  ``deep`` looks one
draw further where two or more cards are missing: for the hand ``H`` a discard leaves,
with ``L(H)`` live outs, it estimates the draws still needed to lay as

    T(H) = 1 / L(H) + sum over out kinds k of  live(k) / L(H) * 1 / L(H + k - e*)

where ``e*`` is the discard it would then make (fewest ``missing``, most live outs):
the expected wait for the first useful card, plus the expected wait for the next one
from the hand that card makes.  Lower is better; it replaces live outs in expert's
order (whiskertrail: fewest missing, no table-fitting card, then ``T``; contract: fewest
missing, ``T``, then the table check), ties by the higher penalty.  One ``missing``
short, ``T`` is ``1 / L``: expert's order.  Everything else is ``expert``'s.

Cost: a discard with two or more missing judges every distinct kind of the hand, each
of its out kinds, and each discard after it (memoised by the hand's kinds): about a
thousand solver calls, a few milliseconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import LIMIT, fits_table
from clients.bots.strong import Kind
from engine.actions import Discard
from engine.cards import JOKER_RANK, Card, full_deck
from engine.solver import analyse

__all__ = ["DeepBot"]

_NONE = 0.5  # live outs counted for a hand with none (a long wait, not an infinite one)


class DeepBot(ExpertBot):
    name = "deep"

    min_missing: int = 2  # look a draw further from this many missing

    def _closed_discard(
        self, sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]
    ) -> Discard:
        by_id = {c.id: c for c in sit.hand}
        memo: dict[tuple[Kind, ...], tuple[int, int, tuple[Kind, ...]]] = {}

        def judge(hand: Sequence[Card]) -> tuple[int, int, tuple[Kind, ...]]:
            key = tuple(sorted(c.kind for c in hand))
            got = memo.get(key)
            if got is None:
                report = analyse(hand, sit.rules, sit.round_number, LIMIT)
                missing = report.missing if report.missing is not None else LIMIT + 1
                live = sum(
                    _copies(sit, k) - seen[k] for k in report.outs if _copies(sit, k) > seen[k]
                )
                got = memo[key] = (missing, live, tuple(report.outs))
            return got

        first: dict[Kind, tuple[int, int, tuple[Kind, ...]]] = {}
        for action in discards:
            c = by_id[action.card]
            if c.kind not in first:
                first[c.kind] = judge([x for x in sit.hand if x is not c])
        fewest = min(m for m, _, _ in first.values())
        if fewest < self.min_missing:
            return super()._closed_discard(sit, discards, seen)
        deck = _deck(sit)
        free = sit.rules.draw_from_discard
        wait: dict[Kind, float] = {}
        best: tuple[tuple[float, ...], Discard] | None = None
        for action in discards:
            c = by_id[action.card]
            missing, live, outs = first[c.kind]
            if missing != fewest:
                continue
            if c.kind not in wait:
                rest = [x for x in sit.hand if x is not c]
                wait[c.kind] = _wait(sit, rest, live, outs, seen, deck, judge)
            danger = 1 if self.danger and sit.table and fits_table(c, sit) else 0
            penalty = -sit.rules.penalty(c)
            t = wait[c.kind]
            key = (danger, t, penalty, c.id) if free else (t, danger, penalty, c.id)
            if best is None or key < best[0]:
                best = (key, action)
        assert best is not None
        return best[1]


def _copies(sit: Situation, kind: Kind) -> int:
    return sit.rules.jokers if kind[0] == JOKER_RANK else sit.rules.decks


def _deck(sit: Situation) -> dict[Kind, list[Card]]:
    out: dict[Kind, list[Card]] = {}
    for c in full_deck(sit.rules.decks, sit.rules.jokers):
        out.setdefault(c.kind, []).append(c)
    return out


def _wait(
    sit: Situation,
    rest: list[Card],
    live: int,
    outs: tuple[Kind, ...],
    seen: Counter[Kind],
    deck: dict[Kind, list[Card]],
    judge: Callable[[Sequence[Card]], tuple[int, int, tuple[Kind, ...]]],
) -> float:
    """T(rest): the wait for an out, plus the expected wait for the next one."""
    total = max(live, _NONE)
    t = 1.0 / total
    held = {c.id for c in rest}
    for kind in outs:
        copies = _copies(sit, kind) - seen[kind]
        if copies <= 0:
            continue
        drawn = next((c for c in deck.get(kind, ()) if c.id not in held), None)
        if drawn is None:
            continue
        hand = [*rest, drawn]
        after = min(
            (judge([x for x in hand if x is not e])[:2] for e in _distinct(hand)),
            key=lambda ml: (ml[0], -ml[1]),
        )
        t += copies / total / max(after[1], _NONE)
    return t


def _distinct(hand: Sequence[Card]) -> list[Card]:
    kinds: set[Kind] = set()
    out = []
    for c in hand:
        if c.kind not in kinds:
            kinds.add(c.kind)
            out.append(c)
    return out
