"""Run skeletons: the natural positions a run takes in one suit.

A run is searched as a skeleton (a position mask, bits 1..14); the jokers it
needs and may take follow from the skeleton's span.  The best-selection search
asks ``kept_run_skeletons`` (position masks, naturals, length), the cost search
``make_cost_skeletons`` (with its bounds) and keeps them as ``Skeleton`` objects.
"""

from __future__ import annotations

from itertools import combinations
from operator import itemgetter
from typing import Final

from .planes import popcount, skeleton_kinds
from .tables import SKELETONS_KEPT, RuleTables

# A meld of a cost leaf: run (True, suit or -1 for "any", skeleton, length) or
# set (False, rank or 0 for "any rank the hand has none of", size).
CostMeld = tuple[bool, int, int, int]


# candidates sort by their score, the first field (a C key function: no Python call
# per element)
FIRST_FIELD: Final = itemgetter(0)


def kept_run_skeletons(
    tables: RuleTables, p: int, length: int, meld_jokers: int, spare: int
) -> list[tuple[int, int, int]]:
    """make_run_skeletons for the rule set's exactness and minimum naturals, kept
    with the rule set's tables: a function of a suit's positions and a few small numbers."""
    if length >= 32 or meld_jokers >= 32 or spare >= 1 << 15:  # past what the key packs
        return make_run_skeletons(p, length, tables.exact, meld_jokers, tables.min_naturals, spare)
    key = (((p << 5 | length) << 5 | meld_jokers) << 16) | (spare + 1)
    table = tables.run_skeletons
    got = table.get(key)
    if got is None:
        if len(table) >= SKELETONS_KEPT:
            table.clear()
        got = table[key] = make_run_skeletons(
            p, length, tables.exact, meld_jokers, tables.min_naturals, spare
        )
    return got


def make_run_skeletons(
    p: int, length: int, exact: bool, meld_jokers: int, min_naturals: int, spare: int = -1
) -> list[tuple[int, int, int]]:
    """Run skeletons (position mask, naturals, run length) from available positions p.

    Every subset of p that can form a run (with at most ``jeff`` jokers filling
    the gaps) of exactly ``length`` cards (``exact``) or of at least ``length``
    and at most 13 cards.  A skeleton is produced once, from its lowest and
    highest positions.  A subset that leaves out an available natural inside
    its span, or next to one of its ends, only makes sense if that natural can
    go to another meld: ``spare`` is the mask of such positions (-1: all).
    """
    out: list[tuple[int, int, int]] = []
    if meld_jokers == 0:
        # no joker to fill a gap: runs of consecutive positions only
        if length < min_naturals:
            return out
        x = p
        while x:
            low = x & -x
            seg = x & (x ^ (x + low))  # the consecutive positions from `low` up
            x ^= seg
            a = low.bit_length() - 1
            b = seg.bit_length() - 1
            if b - a + 1 < length:
                continue
            if exact:
                win = (1 << length) - 1
                for lo in range(a, b - length + 2):
                    out.append((win << lo, length, length))
                continue
            stuck = p & ~spare
            for lo in range(a, b - length + 2):
                lo_stuck = stuck >> (lo - 1) & 1
                for hi in range(lo + length - 1, min(b, lo + 12) + 1):
                    span = hi - lo + 1
                    if (lo_stuck or stuck >> (hi + 1) & 1) and span < 13:
                        continue
                    out.append((((1 << span) - 1) << lo, span, span))
        return out
    if exact:
        # R's lowest position and the window of `length` above it hold every
        # candidate: the naturals there, less up to (count - need) of them
        need = length - meld_jokers
        if need < min_naturals:
            need = min_naturals
        win = (1 << length) - 1
        x = p
        while x:
            low = x & -x
            x ^= low
            w = p & (win * low)
            c = popcount(w)
            if c < need:
                continue
            out.append((w, c, length))
            if c > need:
                others = []
                y = w ^ low
                while y:
                    b = y & -y
                    others.append(b)
                    y ^= b
                for drop in range(1, c - need + 1):
                    for gone in combinations(others, drop):
                        out.append((w ^ sum(gone), c - drop, length))
        return out
    bits: list[int] = []
    x = p
    while x:
        low = x & -x
        bits.append(low.bit_length() - 1)
        x ^= low
    nb = len(bits)
    if nb < min_naturals:
        return out
    # an end may stop short of an available natural only if that one is spare
    # (or the run could not grow that way anyway: 13 cards)
    stuck = p & ~spare
    for i in range(nb):
        lo = bits[i]
        lo_stuck = stuck >> (lo - 1) & 1
        acc = 0
        for k in range(i, nb):
            hi = bits[k]
            acc |= 1 << hi
            span = hi - lo + 1
            if span > 13:
                break
            if (lo_stuck or stuck >> (hi + 1) & 1) and span < 13:
                continue
            run_length = span if span > length else length
            naturals = k - i + 1
            need = run_length - meld_jokers
            if need < min_naturals:
                need = min_naturals
            if naturals < need:
                continue
            out.append((acc, naturals, run_length))
            if naturals > need and k - i >= 2:
                inner = [b for b in bits[i + 1 : k] if spare >> b & 1]
                for drop in range(1, min(naturals - need, len(inner)) + 1):
                    for gone in combinations(inner, drop):
                        m = acc
                        for g in gone:
                            m ^= 1 << g
                        out.append((m, naturals - drop, run_length))
    return out


class Skeleton:
    """A run skeleton of the cost search, made once per (length, suit, positions left).

    A class rather than a tuple: compiled (setup.py), its fields are read
    unboxed, and the search reads them at every node.
    """

    __slots__ = (
        "joker_room",
        "kinds",
        "lo",
        "lower_bound",
        "meld",
        "open_places",
        "r_mask",
        "run_length",
        "span_kinds",
        "suit",
    )

    def __init__(
        self,
        lower_bound: int,
        open_places: int,
        joker_room: int,
        r_mask: int,
        run_length: int,
        suit: int,
        lo: int,
    ) -> None:
        self.lower_bound = lower_bound  # lower bound of its cost alone
        self.open_places = open_places  # open places
        self.joker_room = joker_room  # places a joker may take
        self.r_mask = r_mask  # positions (bits 1..14); 0 for an all-wildcard run
        self.run_length = run_length  # length
        self.suit = suit  # -1: any suit (all wildcards)
        self.lo = lo  # lowest position
        self.kinds = skeleton_kinds(r_mask, suit) if suit >= 0 else 0
        span = (1 << r_mask.bit_length()) - (1 << lo) if r_mask else 0
        self.span_kinds = skeleton_kinds(span, suit) if suit >= 0 else 0
        self.meld: CostMeld = (True, suit, r_mask, run_length)  # as a leaf lists it


NO_SKELETONS: Final[list[Skeleton]] = []  # shared, never changed


class SkeletonLevel:
    """The skeletons a run of one length may take on what is left, and the fewest
    open places among them (what that run adds to a lower bound at least)."""

    __slots__ = ("min_open", "skels")

    def __init__(self, skels: list[Skeleton], min_open: int) -> None:
        self.skels = skels
        self.min_open = min_open


def make_cost_skeletons(
    p: int, length: int, tables: RuleTables, joker_count: int, limit: int, omit: bool, prune: bool
) -> list[tuple[int, int, int, int, int]]:
    """Run skeletons of one suit for the cost search: (lower bound, open, jc, R, len).

    A skeleton takes every available natural between its lowest and highest
    position, except (``omit``) a few inner ones that another meld may want;
    leaving out more than the joker room of the run never lowers the cost.
    With ``prune``, a run longer than the minimum is dropped when a window of
    the minimum length inside it has no more open places and no more places
    jokers cannot take: it uses fewer of the naturals for no higher cost.
    Only a search for the cost itself may prune: the longer run can be a tie
    whose open places hold other outs.
    """
    exact = tables.exact
    min_naturals = tables.min_naturals
    max_jokers = tables.max_jokers
    out: list[tuple[int, int, int, int, int]] = []
    bits: list[int] = []
    x = p
    while x:
        low = x & -x
        bits.append(low.bit_length() - 1)
        x ^= low
    nb = len(bits)
    maxspan = length if exact else 13
    for i in range(nb):
        lo = bits[i]
        acc = 0
        for k in range(i, nb):
            hi = bits[k]
            acc |= 1 << hi
            span = hi - lo + 1
            if span > maxspan:
                break
            run_length = length if exact or span <= length else span
            cap = run_length - min_naturals
            if cap < 0:
                continue
            if cap > max_jokers:
                cap = max_jokers
            naturals = k - i + 1
            open_places = run_length - naturals
            joker_room = cap if cap < open_places else open_places
            lower_bound = open_places - (joker_room if joker_room < joker_count else joker_count)
            if lower_bound > limit:
                continue
            if prune and run_length > length:
                # the best window of the minimum length inside the span
                win = (1 << length) - 1
                most = 0
                for a in range(lo, hi - length + 2):
                    c = popcount(acc >> a & win)
                    if c > most:
                        most = c
                o2 = length - most
                c2 = min(max_jokers, length - min_naturals)
                if c2 >= 0 and o2 <= open_places and o2 - min(c2, o2) <= open_places - joker_room:
                    continue
            out.append((lower_bound, open_places, joker_room, acc, run_length))
            # each useful omission moves one more joker into place, so there
            # are never more than the hand has jokers
            room = cap - open_places
            if room > joker_count:
                room = joker_count
            if omit and room > 0 and k - i >= 2:
                inner = bits[i + 1 : k]
                for drop in range(1, min(room, len(inner)) + 1):
                    o2 = open_places + drop
                    j2 = cap if cap < o2 else o2
                    lb2 = o2 - (j2 if j2 < joker_count else joker_count)
                    if lb2 > limit:
                        break
                    for gone in combinations(inner, drop):
                        m = acc
                        for g in gone:
                            m ^= 1 << g
                        out.append((lb2, o2, j2, m, run_length))
    return out
