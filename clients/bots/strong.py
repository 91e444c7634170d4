"""``strong``: greedy's plan, with discards chosen by the exact odds of the next draw.

Until it has laid its contract, ``strong`` judges every distinct discard by what the
hand left behind needs: first the solver's ``missing`` count (as ``greedy`` does),
then the number of *live outs* — the cards still unseen by this seat whose draw
would lower ``missing`` (``engine.solver.analyse`` lists the kinds; ``strong``
counts their copies that are neither in its hand, nor on the table, nor among the
discards it has watched go by this deal).  That count over the unseen cards is the
probability, up to a constant, that the next card drawn helps: a one-ply search of
the draw's chance node, computed exactly rather than sampled.  Ties go to shedding
the higher penalty, then the lower card id.

Card counting is the opponent modelling: cards an opponent took or refused are
known not to be in the stock, so they are not counted as outs.  It needs memory, so
a ``strong`` bot remembers the discards it has seen (reset at each deal and after
the stock is rebuilt from the discards); a house-bot pool worker keeps one bot per
(game, seat), so with several workers each remembers only the turns it played.

Every other decision (draws, May I?, melding, discards once open) is ``greedy``'s.
Measured against ``greedy``, ``montecarlo`` and ``oracle`` in docs/TOURNAMENTS.md.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Self

from clients.bots.base import Bot, Situation
from clients.bots.greedy import LIMIT, greedy_action, progress_action
from engine.actions import Action, Discard
from engine.cards import JOKER_RANK, Card, card
from engine.rulesets import RuleSet
from engine.solver import analyse

Kind = tuple[int, int]


def live_outs(hand: Sequence[Card], sit: Situation, seen: Counter[Kind]) -> tuple[int, int]:
    """(missing, live outs) of a hand: outs weighted by their copies not yet seen."""
    return hand_live_outs(hand, sit.rules, sit.round_number, seen)


def hand_live_outs(
    hand: Sequence[Card], rules: RuleSet, round_number: int, seen: Counter[Kind]
) -> tuple[int, int]:
    """:func:`live_outs` from the rule set and round alone (no situation: the training
    features read them from an observation)."""
    report = analyse(hand, rules, round_number, LIMIT)
    missing = report.missing if report.missing is not None else LIMIT + 1
    live = 0
    for kind in report.outs:
        copies = rules.jokers if kind[0] == JOKER_RANK else rules.decks
        live += max(0, copies - seen[kind])
    return missing, live


#: how a discard ranks (lowest first): from the card, and the ``missing`` count and
#: live outs of the hand it leaves
DiscardRank = Callable[[Card, int, int], tuple[int, ...]]


def best_discard(
    sit: Situation, discards: Sequence[Discard], seen: Counter[Kind], rank: DiscardRank
) -> Discard:
    """The discard ``rank`` puts first, judging each distinct card kind's leave once."""
    by_id = {c.id: c for c in sit.hand}
    judged: dict[Kind, tuple[int, int]] = {}
    best: tuple[tuple[int, ...], Discard] | None = None
    for action in discards:
        c = by_id[action.card]
        if c.kind not in judged:
            rest = tuple(x for x in sit.hand if x is not c)
            judged[c.kind] = live_outs(rest, sit, seen)
        key = rank(c, *judged[c.kind])
        if best is None or key < best[0]:
            best = (key, action)
    assert best is not None
    return best[1]


def outs_discard(sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]) -> Discard:
    """The discard that leaves the fewest missing, then the most live outs, then sheds most."""

    def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
        return (missing, -live, -sit.rules.penalty(c), c.id)

    return best_discard(sit, discards, seen, rank)


class StrongBot(Bot):
    name = "strong"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._deal: tuple[int, int] | None = None  # (round, stock rebuilds) the memory is of
        self._passed: set[int] = set()  # ids of discards seen this deal

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        self._watch(situation)
        action = self._decide(situation, legal)
        if isinstance(action, Discard):
            self._passed.add(action.card)
        return action

    def clone(self) -> Self:
        """A copy with a memory of its own (searches play copies on; cheaper than deepcopy)."""
        twin = copy.copy(self)
        twin._passed = set(self._passed)
        return twin

    def remember(self, action: Action) -> None:
        """An action this seat took that was not this bot's choice (the ``oracle`` plays
        other moves over a ``strong`` base): a discard is one more card seen go by."""
        if isinstance(action, Discard):
            self._passed.add(action.card)

    def _watch(self, sit: Situation) -> None:
        deal = (sit.round_number, sit.exhaustions)
        if deal != self._deal:
            self._deal = deal
            self._passed = set()
        if sit.discard_top is not None:
            self._passed.add(sit.discard_top.id)

    def seen(self, sit: Situation) -> Counter[Kind]:
        """Copies of each kind this seat knows are not in the stock."""
        ids = {c.id: c for c in sit.hand}
        for meld in sit.table:
            ids.update((c.id, c) for c in meld.cards)
        if sit.discard_top is not None:
            ids[sit.discard_top.id] = sit.discard_top
        counts: Counter[Kind] = Counter(c.kind for c in ids.values())
        decks = sit.rules.decks
        for card_id in self._passed - ids.keys():
            counts[card(card_id, decks).kind] += 1
        return counts

    def _decide(self, sit: Situation, legal: Sequence[Action]) -> Action:
        if sit.phase != "play" or sit.opened or progress_action(sit, legal) is not None:
            return greedy_action(sit, legal)
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return greedy_action(sit, legal)
        return outs_discard(sit, discards, self.seen(sit))
