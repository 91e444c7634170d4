"""Card tracking: what one seat has watched of the deal, beyond its situation of the moment.

A bot is shown its seat's :class:`~clients.bots.base.Situation` at each of its decisions
(its turns, and in contract every May I? window, so it sees every discard there); a
:class:`TableMemory` it updates at each of them keeps what those looks add up to:

* the discard pile as it watched it: the cards it saw laid there and not seen taken
  (cards leave the pile from the top and arrive on it, so at each look it keeps the
  longest bottom part of what it remembered that fits the pile's size and top now), and
  how many pile cards under those it never saw;
* ``held``: the cards it saw an opponent take from the pile (a whiskertrail pile draw, a
  May I?), held by that opponent until they show on the table or the pile again.  Who
  took a card: in a rule set without May I? only the seat after the discarder may take
  a discard, and between two looks only this seat's own discard can leave the pile it
  watched, so the taker is the next seat; with May I? the seat whose hand grew by two or
  more (a claim) when that is one seat;
* ``thrown``: the cards it saw each seat discard this deal (a contract claim window names
  the discarder; a whiskertrail top seen at its turn was the previous seat's discard).

Both ``search`` (its sampled worlds deal ``held`` cards to their holders) and the
``sharp`` bot (its discards avoid feeding what an opponent collects) read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from clients.bots.base import Situation
from engine.cards import Card
from engine.melds import Meld

__all__ = ["TableMemory"]


# the card ids on a table, by the table's identity (an engine state's melds stay one
# tuple until a meld changes; the tuple is kept, so its id is not reused meanwhile)
_TABLE_IDS: dict[int, tuple[Sequence[Meld], frozenset[int]]] = {}


def _table_ids(table: Sequence[Meld]) -> frozenset[int]:
    found = _TABLE_IDS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    ids = frozenset(c.id for m in table for c in m.cards)
    if len(_TABLE_IDS) >= 256:
        _TABLE_IDS.clear()
    _TABLE_IDS[id(table)] = (table, ids)
    return ids


@dataclass
class TableMemory:
    """What one seat has watched of the current deal (see the module's docstring).

    ``pile``: the discard pile's cards the seat has seen laid there and not seen taken,
    bottom first (the top last); ``unknown``: how many pile cards under those it never
    saw.  ``held``: per opponent seat, the cards it saw that seat take from the pile and
    not yet seen again.  ``thrown``: per seat, the cards it saw that seat discard this
    deal.  Kept up to date by :meth:`observe` at each of the seat's decisions (and
    :meth:`discarded` for its own discards)."""

    deal: tuple[int, int] = (-1, -1)  # (round, exhaustions)
    stock_size: int = -1
    sizes: tuple[int, ...] = ()
    pile: list[int] = field(default_factory=list)
    unknown: int = 0
    held: dict[int, set[int]] = field(default_factory=dict)
    thrown: dict[int, set[int]] = field(default_factory=dict)
    _own_top: int | None = None  # its own last discard, while it has not looked since

    def copy(self) -> TableMemory:
        """An independent twin: the same knowledge, no container shared."""
        return replace(
            self,
            pile=list(self.pile),
            held={s: set(c) for s, c in self.held.items()},
            thrown={s: set(c) for s, c in self.thrown.items()},
        )

    def observe(self, sit: Situation) -> None:
        # (every decision of a training environment's seat: hence the plain locals)
        round_number, exhaustions = sit.round_number, sit.exhaustions
        deal = self.deal
        if round_number != deal[0]:
            self.held = {}
            self.thrown = {}
            self._restart(sit)
            self.deal = (round_number, exhaustions)
        elif exhaustions != deal[1] or sit.stock_size > self.stock_size:
            self._restart(sit)  # the pile but its top went back into the stock
            self.deal = (round_number, exhaustions)
        else:
            self._reconcile(sit, sit.discard_top)
        self._own_top = None
        self.stock_size = sit.stock_size
        self.sizes = sit.hand_sizes
        self._note_thrown(sit)
        held = self.held
        if not held:
            return
        shown = set(self.pile)
        shown.update([c.id for c in sit.hand])
        shown |= _table_ids(sit.table)
        for seat in list(held):
            cards = held[seat]
            cards -= shown
            if not cards:
                del held[seat]

    def discarded(self, card_id: int) -> None:
        """The seat's own discard: on top of the pile now."""
        self.pile.append(card_id)
        self._own_top = card_id

    def known_held(self, seat: int) -> set[int]:
        """The cards ``seat`` is known to hold (taken from the pile, not seen since)."""
        return self.held.get(seat, set())

    def _note_thrown(self, sit: Situation) -> None:
        top = sit.discard_top
        if top is None or sit.seats < 2:
            return
        if sit.phase == "claim":
            by = (sit.current - 1) % sit.seats  # a May I? window: the discarder's card
        elif sit.phase == "draw" and sit.turns_completed > 0 and sit.current == sit.seat:
            by = (sit.seat - 1) % sit.seats  # the previous turn's discard
        else:
            return
        if by != sit.seat:
            self.thrown.setdefault(by, set()).add(top.id)

    def _restart(self, sit: Situation) -> None:
        self.pile = [sit.discard_top.id] if sit.discard_top is not None else []
        self.unknown = max(0, sit.discard_size - len(self.pile))

    def _reconcile(self, sit: Situation, top: Card | None) -> None:
        """Cards leave the pile from the top and arrive on it: keep the longest bottom part
        of what was there that fits the pile's size and top now."""
        size, pile = sit.discard_size, self.pile
        if sit.seats > 2 and not sit.rules.may_i:
            self._reconcile_unseen_turns(sit, top)
            return
        if top is None:
            kept, added = 0, False
        else:
            same = size - self.unknown  # the one length that keeps the size
            if 0 < same <= len(pile) and pile[same - 1] == top.id:
                kept, added = same, False
            else:
                kept, added = max(0, min(len(pile), size - 1 - self.unknown)), True
        removed = pile[kept:] if kept < len(pile) else None
        if removed is not None or added:
            pile = pile[:kept]
            if added and top is not None:
                pile.append(top.id)
            self.pile = pile
        if len(pile) + self.unknown != size:  # not what a pile can do: start over
            self._restart(sit)
            return
        if not removed:
            return
        taker = self._taker(sit)
        if taker is None:
            return
        mine = {c.id for c in sit.hand}
        for card_id in removed:
            if card_id not in mine:
                self.held.setdefault(taker, set()).add(card_id)

    def _reconcile_unseen_turns(self, sit: Situation, top: Card | None) -> None:
        """Three or more seats without May I?: between two of its turns the seat sees none
        of the other discards, and the pile's size cannot tell whether the next seat took
        its discard (a take by a later seat changes the size alike).  What stays certain:
        the cards under its own discard (only a top card is ever drawn, and a draw is
        followed by a discard on it), and the top now.  Its own discard goes back to the
        unseen cards; the order of the cards under the top never matters (a take is of
        the top, a reshuffle shuffles)."""
        pile = self.pile
        if pile and self._own_top == pile[-1]:
            pile = pile[:-1]  # taken by the next seat, or not: unknown
        elsewhere = {c.id for c in sit.hand}  # (its own pile draw)
        elsewhere |= _table_ids(sit.table)
        if not elsewhere.isdisjoint(pile):
            pile = [i for i in pile if i not in elsewhere]
        # (a new list whenever it differs: the one it had may be kept when it does not)
        known = [*pile, top.id] if top is not None and top.id not in pile else pile
        if top is not None and known[-1] != top.id:
            self._restart(sit)
            return
        self.pile = known
        self.unknown = sit.discard_size - len(known)
        if self.unknown < 0:
            self._restart(sit)

    def _taker(self, sit: Situation) -> int | None:
        """The opponent who took from the pile since the last look, when it is clear."""
        if sit.seats == 2:
            return 1 - sit.seat  # the one opponent
        if not sit.rules.may_i:
            # only the seat after a discarder may draw its discard, and between two looks
            # only this seat's own discard can leave the part of the pile it watched
            return (sit.seat + 1) % sit.seats
        if len(self.sizes) != len(sit.hand_sizes):
            return None
        others = [s for s in range(sit.seats) if s != sit.seat]
        growth = {s: sit.hand_sizes[s] - self.sizes[s] for s in others}
        most = max(growth.values())
        leaders = [s for s, g in growth.items() if g == most]
        return leaders[0] if most >= 2 and len(leaders) == 1 else None
