"""``dump``: ``closer``, shedding its costliest cards once the race is lost.

At a whiskertrail table of three or more seats a round ends when one seat goes out, and
an open seat holding one card goes out as soon as a card that lays off comes its way:
from the stock or from the pile its neighbour feeds.  A closed hand that still lacks two
cards or more (``missing`` of its best leave) needs two draws that help, and three open
opponents race for one.  ``closer`` still keeps the hand's chances then (fewest
``missing``, then half the penalty shed against the live outs); ``dump`` sheds its
costliest card instead (the next seat's danger first: a card that fits the table stays
while the seat after this one is open, as ``closer`` keeps it), counting on the round
ending before the hand opens.

Found by ``bench/rollout_check.py --kind dump`` (docs/BOT_STUDIES.md): with the hands
known and the stock reshuffled, the costliest card beat ``closer``'s discard there; at
two seats it loses (one opponent, often stuck at one or two cards for many turns).
Each option is a class attribute; the variants are classes below.  ``dumpfar`` (an
open opponent with one card and the leave two short, or with two and three short) is
the champion, ``best`` (docs/BOTS.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.closer import CloserBot, next_open
from clients.bots.greedy import fits_table
from clients.bots.strong import Kind, live_outs
from engine.actions import Discard

__all__ = [
    "DumpBot",
    "DumpFarBot",
    "DumpFreeBot",
    "DumpJokerBot",
    "DumpThreeBot",
    "DumpTwoCardsBot",
    "lost_race",
]


def lost_race(sit: Situation, cards: int, min_seats: int) -> bool:
    """A free pile, at least ``min_seats`` seats, and an open opponent holding at most
    ``cards`` cards."""
    if not sit.rules.draw_from_discard or sit.seats < min_seats:
        return False
    return any(
        opened and s != sit.seat and sit.hand_sizes[s] <= cards
        for s, opened in enumerate(sit.opened_seats)
    )


class DumpBot(CloserBot):
    name = "dump"

    #: an open opponent holding at most this many cards
    dump_cards: int = 1
    #: ... and the best leave still lacks at least this many cards
    dump_missing: int = 2
    #: the smallest table it dumps at
    dump_seats: int = 3
    #: also once an open opponent holds at most this many cards and the best leave
    #: lacks ``dump_missing`` + 1 cards or more (0: not)
    dump_cards_far: int = 0
    #: keep jokers while the best leave lacks exactly ``dump_missing`` cards
    keep_jokers_near: bool = False
    #: while an open opponent holds at most this many cards and the best leave lacks
    #: ``dump_missing`` or more (the race not yet lost): among the leaves that lack the
    #: fewest, shed the costliest (0: ``closer``'s rank)
    dump_free_cards: int = 0

    def _lost(self, sit: Situation, fewest: int) -> bool:
        if fewest >= self.dump_missing and lost_race(sit, self.dump_cards, self.dump_seats):
            return True
        far = self.dump_cards_far
        return far > 0 and fewest > self.dump_missing and lost_race(sit, far, self.dump_seats)

    def _closed_discard(
        self, sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]
    ) -> Discard:
        widest = max(self.dump_cards, self.dump_cards_far, self.dump_free_cards)
        if not lost_race(sit, widest, self.dump_seats):
            return super()._closed_discard(sit, discards, seen)
        by_id = {c.id: c for c in sit.hand}
        judged: dict[Kind, tuple[int, int]] = {}
        for action in discards:
            c = by_id[action.card]
            if c.kind not in judged:
                judged[c.kind] = live_outs(tuple(x for x in sit.hand if x is not c), sit, seen)
        rank = self._closed_rank(sit)
        fewest = min(m for m, _ in judged.values())
        lost = self._lost(sit, fewest)
        free = (
            not lost
            and fewest >= self.dump_missing
            and lost_race(sit, self.dump_free_cards, self.dump_seats)
        )
        if not lost and not free:
            return min(discards, key=lambda a: rank(by_id[a.card], *judged[by_id[a.card].kind]))
        if free:
            discards = [a for a in discards if judged[by_id[a.card].kind][0] == fewest]
        guard = self.danger and bool(sit.table) and (not self.next_danger or next_open(sit))
        penalty = sit.rules.penalty
        keep = self.keep_jokers_near and fewest == self.dump_missing

        def shed(action: Discard) -> tuple[int, int, int, int]:
            c = by_id[action.card]
            danger = 1 if guard and fits_table(c, sit) else 0
            return (danger, 1 if keep and c.is_joker else 0, -penalty(c), c.id)

        return min(discards, key=shed)


class DumpThreeBot(DumpBot):
    """... only when the best leave lacks three cards or more."""

    name = "dump3"
    dump_missing = 3


class DumpTwoCardsBot(DumpBot):
    """... once an open opponent holds two cards or fewer."""

    name = "dump2c"
    dump_cards = 2


class DumpFarBot(DumpBot):
    """... and once an open opponent holds two cards or fewer while the best leave lacks
    three or more."""

    name = "dumpfar"
    dump_cards_far = 2


class DumpJokerBot(DumpFarBot):
    """``dumpfar``, keeping its jokers while the best leave lacks two cards."""

    name = "dumpjk"
    keep_jokers_near = True


class DumpFreeBot(DumpFarBot):
    """``dumpfar``, and while an open opponent holds two cards and the best leave lacks
    two: the costliest card among those whose leave lacks no more."""

    name = "dumpfree"
    dump_free_cards = 2
