"""The Melds of the selection the search chose, built from its id masks."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Final

from engine.cards import NO_SUIT, Card
from engine.melds import Meld
from engine.rulesets import MeldKind

from .best_so_far import BestSoFar
from .card_ids import KIND_MASK
from .values import Selection


def slot_setter(cls: type[Any], names: tuple[str, str, str, str, str]) -> Any:
    """A fast constructor for a frozen slots dataclass of five fields, or None if
    its fields moved.

    A frozen dataclass's __init__ sets each field through object.__setattr__
    (about 2.5 us for a Meld); writing the slots directly makes the same value
    in a fraction of that.  Used only while the field list is exactly ``names``
    and the class has no __post_init__, so it cannot drift from the class.
    """
    if tuple(f.name for f in fields(cls)) != names or hasattr(cls, "__post_init__"):
        return None
    try:
        object.__new__(cls)
    except TypeError:  # a class compiled by mypyc (native): its own __init__ is fast
        return None
    s0, s1, s2, s3, s4 = [cls.__dict__[n].__set__ for n in names]
    new = object.__new__

    def make5(a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
        obj = new(cls)
        s0(obj, a)
        s1(obj, b)
        s2(obj, c)
        s3(obj, d)
        s4(obj, e)
        return obj

    return make5


_MELD_FIELDS: Final = ("kind", "cards", "rank", "suit", "owner")


_meld_setter = slot_setter(Meld, _MELD_FIELDS)


def new_meld(kind: MeldKind, cards: tuple[Card, ...], rank: int, suit: int) -> Meld:
    if _meld_setter is None:
        return Meld(kind, cards, rank, suit)
    meld: Meld = _meld_setter(kind, cards, rank, suit, -1)
    return meld


def run_meld(cards: list[Card], top: int) -> Meld:
    """The run of these cards (naturals first, then jokers, as ids sort them), jokers
    placed for the lowest start: the same Meld as melds.build_run."""
    length = len(cards)
    slots: list[Card | None] = [None] * 15
    ranks = 0
    nat = 0
    for c in cards:
        r = c.rank
        if not r:
            break
        slots[r] = c
        ranks |= 1 << r
        nat += 1
    joker_count = length - nat
    # lowest start with the ace low: the jokers not needed for gaps go below
    lo = (ranks & -ranks).bit_length() - 1
    spare = joker_count - (ranks.bit_length() - lo - nat)
    start = 99
    if spare >= 0:
        start = lo - spare if lo > spare else 1
        if start + length - 1 > top:
            start = 99
    if top == 14 and ranks & 2:
        # or with the ace standing above the king
        high = (ranks ^ 2) | 1 << 14
        lo2 = (high & -high).bit_length() - 1
        spare = joker_count - (15 - lo2 - nat)
        if spare >= 0:
            high_start = lo2 - spare if lo2 > spare else 1
            if high_start + length - 1 <= top and high_start < start:
                start = high_start
                slots[14] = slots[1]
                slots[1] = None
    out: list[Card] = []
    j = nat
    for r in range(start, start + length):
        got = slots[r]
        if got is None:
            got = cards[j]
            j += 1
        out.append(got)
    return new_meld(MeldKind.RUN, tuple(out), start, cards[0].suit)


def selection_of(best_so_far: BestSoFar) -> Selection:
    chosen = best_so_far.best_chosen
    assert chosen is not None
    used = best_so_far.best_jokers
    masks = best_so_far.split(chosen, used)
    by_id = best_so_far.id_table().by_id
    melds: list[Meld] = []
    top = best_so_far.tables.top
    is_run = best_so_far.shape.is_run
    for slot, m in enumerate(masks):
        cards: list[Card] = []
        # the id mask a deck (52 ids) at a time: each part is a machine word
        base = 0
        while m:
            part = m & KIND_MASK
            m >>= 52
            while part:
                low = part & -part
                cards.append(by_id[base + low.bit_length() - 1])
                part ^= low
            base += 52
        # ids ascending: naturals first, then jokers, each in card order
        if is_run[slot]:
            melds.append(run_meld(cards, top))
        else:
            melds.append(new_meld(MeldKind.SET, tuple(cards), cards[0].rank, NO_SUIT))
    return Selection(tuple(melds), best_so_far.best_points, used)
