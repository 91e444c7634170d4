"""``sharp``: ``expert`` with a card-tracking opponent model for its discards.

``expert`` keeps from feeding the table (a card that lays off on a meld there).  What it
does not know is what an opponent collects in hand; its seat has seen some of it: the
cards an opponent took from the pile (a whiskertrail pile draw, a May I?), which that
opponent holds until they show again, and the cards each opponent threw
(:class:`~clients.bots.tracking.TableMemory`).  ``sharp`` reads that memory:

* **feed** (``feed``): a card of the rank of a card a seat that may take the discard is
  known to hold, or of its suit within two ranks (a set or a run it builds), is kept in
  the closed hand: it ranks right after the live outs (``feed_early``: where expert
  puts its danger), and once open right after the lay-off check (``feed_open``, measured
  worse: an open hand should shed points).  Who may take a discard: the next seat where
  the pile is drawn (no May I?), every other seat not yet open where it is claimed
  (expert's opponents claim only then).
* **safe** (``safe``): among discards otherwise equal, before the penalty, one of a rank
  such a seat threw this deal (it is not collecting it).

Everything else is ``expert``'s.  Each flag is a measured option (docs/BOTS.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Self

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import fits_table
from clients.bots.strong import DiscardRank
from clients.bots.tracking import TableMemory
from engine.actions import Action, Discard
from engine.cards import Card, card

__all__ = ["SharpBot"]


class SharpBot(ExpertBot):
    name = "sharp"

    feed: bool = True  # a card a taker is known to collect counts as danger
    feed_early: bool = False  # ... where expert puts danger (else after the live outs)
    feed_open: bool = False  # ... and in the open hand's discards (measured worse)
    feed_span: int = 2  # a run partner: of its suit within this many ranks (0: sets only)
    safe: bool = False  # tie-break: a rank a taker threw this deal

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.memory = TableMemory()

    def clone(self) -> Self:
        twin = super().clone()
        twin.memory = self.memory.copy()
        return twin

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        self.memory.observe(situation)
        action = super().choose(situation, legal, rng)
        if isinstance(action, Discard):
            self.memory.discarded(action.card)
        return action

    def remember(self, action: Action) -> None:
        super().remember(action)
        if isinstance(action, Discard):
            self.memory.discarded(action.card)

    # ------------------------------------------------------------------ the model
    def takers(self, sit: Situation) -> list[int]:
        """The seats that may take this seat's discard."""
        if not sit.rules.may_i:
            return [(sit.seat + 1) % sit.seats]
        return [s for s in range(sit.seats) if s != sit.seat and not sit.opened_seats[s]]

    def _collected(self, sit: Situation) -> list[Card]:
        decks = sit.rules.decks
        ids = set().union(*(self.memory.known_held(s) for s in self.takers(sit)))
        return [card(i, decks) for i in sorted(ids)]

    def _thrown_ranks(self, sit: Situation) -> set[int]:
        decks = sit.rules.decks
        ids = set().union(*(self.memory.thrown.get(s, set()) for s in self.takers(sit)))
        return {card(i, decks).rank for i in ids}

    def _feeds(self, sit: Situation) -> Callable[[Card], int]:
        held = [h for h in self._collected(sit) if not h.is_joker] if self.feed else []
        span = self.feed_span

        def feeds(c: Card) -> int:
            if c.is_joker:
                return 0
            for h in held:
                if h.rank == c.rank or (h.suit == c.suit and abs(h.rank - c.rank) <= span):
                    return 1
            return 0

        return feeds

    # ------------------------------------------------------------------ discards
    def _open_key(self, sit: Situation) -> Callable[[Discard], tuple[int, ...]]:
        base = super()._open_key(sit)
        if not self.feed_open:
            return base
        by_id = {c.id: c for c in sit.hand}
        feeds = self._feeds(sit)

        def key(action: Discard) -> tuple[int, ...]:
            fits, *rest = base(action)
            return (fits, feeds(by_id[action.card]), *rest)

        return key

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        free = sit.rules.draw_from_discard and not sit.rules.may_i
        feeds = self._feeds(sit)
        thrown = self._thrown_ranks(sit) if self.safe else set()

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            danger = 1 if self.danger and sit.table and fits_table(c, sit) else 0
            fed = feeds(c)
            if self.feed_early:
                danger, fed = max(danger, fed), 0
            unsafe = 0 if c.rank in thrown else 1
            if not self.safe:
                unsafe = 0
            penalty = -sit.rules.penalty(c)
            if free:
                return (missing, danger, -live, fed, unsafe, penalty, c.id)
            return (missing, -live, danger, fed, unsafe, penalty, c.id)

        return rank


class SharpEarly(SharpBot):
    """Measurement variant: feed counts exactly as expert's danger."""

    name = "sharp-early"
    feed_early = True


class SharpSafe(SharpBot):
    """Measurement variant: feed and the safe tie-break."""

    name = "sharp-safe"
    safe = True


class SharpOpen(SharpBot):
    """Measurement variant: feed in the open hand's discards too."""

    name = "sharp-open"
    feed_open = True


class SharpSpan1(SharpBot):
    """Measurement variant: run partners within one rank."""

    name = "sharp-span1"
    feed_span = 1


class SharpSets(SharpBot):
    """Measurement variant: the ranks of the known cards only (set partners)."""

    name = "sharp-sets"
    feed_span = 0
