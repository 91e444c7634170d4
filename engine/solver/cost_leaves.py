"""The cost of a leaf of the missing-cards search: a complete choice of melds.

The search for the fewest cards that would make the contract layable works on
a relaxation: every card still to come is a "wildcard" that stands for the
natural its place in a meld needs (a natural, so it counts towards a meld's
naturals and not towards its joker limit).  With the hand's jokers spread over
the open places afterwards, a leaf's cost is

    open places - min(jokers in hand, places a joker may take).

The relaxation never costs more than the truth; a leaf is accepted at that cost
once the rest of the deck is shown to hold the cards its wildcards stand for (or
jokers that may take their places), else it is costed exactly.

``LeafCosting`` holds the search's state and costs leaves (``leaf``): the
relaxed cost, the cheap availability proof, the exact costing where that proof
fails (``exact``), and the outs a best leaf leaves open (``gather``).  The
search over the choices is its subclass ``CostSearch`` (cost_search.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, permutations, product
from typing import Any, Final

from .planes import (
    ALL_KINDS,
    RANK_BITS,
    copies_per_suit,
    popcount,
    rank_count,
    sets_fit,
    suit_count_key,
)
from .skeletons import CostMeld, SkeletonLevel
from .tables import ContractShape, RuleTables

# every natural kind as an out bit (rank * 4 + suit: bits 4..55; bit 0 is the joker)
ALL_NATURAL_OUTS: Final = ((1 << 56) - 1) ^ 15


# the set melds, by rank * 32 + size (sizes below 32; larger ones are made)
_SET_MELDS: Final = tuple((False, r, size, 0) for r in range(14) for size in range(32))


def set_meld(r: int, size: int) -> CostMeld:
    return _SET_MELDS[r * 32 + size] if size < 32 else (False, r, size, 0)


class LeafCosting:
    """The cost search's state, and the costing of its leaves (see the module docstring)."""

    __slots__ = (
        "best",
        "cands",
        "collect",
        "first",
        "held",
        "joker_count",
        "level_memo",
        "limit",
        "nruns",
        "omit",
        "rest",
        "rest_joker_room",
        "rest_jokers",
        "rest_open",
        "rest_planes",
        "set_avail",
        "set_groups",
        "set_left",
        "set_order",
        "set_planes",
        "set_top",
        "shape",
        "stack",
        "sure",
        "tables",
    )

    def __init__(
        self,
        tables: RuleTables,
        shape: ContractShape,
        held: tuple[int, int, int, int],
        joker_count: int,
        limit: int,
        collect: bool,
        first: bool,
    ) -> None:
        self.tables = tables
        self.shape = shape
        self.held = held  # the hand's planes (the rest of the deck is what they lack)
        self.joker_count = joker_count
        self.rest_jokers = tables.deck_jokers - joker_count
        # kinds the rest of the deck still holds a copy of (the hand has fewer than
        # one per deck): plane ``decks`` is the kinds held once per deck
        self.rest = ALL_KINDS & ~held[tables.decks - 1] if 1 <= tables.decks <= 4 else ALL_KINDS
        # rest_planes[L - 1]: the kinds of which the rest holds L copies or more
        # (held at most decks - L times)
        held_at = (ALL_KINDS, held[0], held[1], held[2], held[3])
        planes = [0, 0, 0, 0]
        for level in range(1, 5):
            at = tables.decks - level + 1  # held this many times or more: fewer than L left
            if at >= 5:
                planes[level - 1] = ALL_KINDS
            elif at >= 1:
                planes[level - 1] = ALL_KINDS & ~held_at[at]
        self.rest_planes = (planes[0], planes[1], planes[2], planes[3])
        self.limit = limit
        self.collect = collect  # gather the kinds the best leaves leave open
        self.first = first  # stop at the first leaf within the limit
        self.best = limit + 1
        # kinds as out bits (rank * 4 + suit, the joker 0: bit order is
        # (rank, suit) order), so gathering allocates nothing
        self.cands = 0
        self.sure = 0
        # skeletons per (length, positions left): a skeleton takes all the
        # naturals still left in its span, so later runs look at what is left
        self.level_memo: dict[int, SkeletonLevel] = {}  # by g1 << 4 | length
        self.nruns = len(shape.run_len)
        self.omit = bool(shape.set_size) or self.nruns > 1
        # bounds of what the requirements still to place need at least
        self.rest_open: list[int] = []
        self.rest_joker_room: list[int] = []
        # the sets phase's working state (one sets phase at a time)
        self.set_planes = (0, 0, 0, 0)
        self.set_avail = [0] * 14
        self.set_left = [0] * 14
        self.set_order: list[int] = []
        self.set_groups = [0] * 14  # sets placed per rank
        self.set_top = 0
        # the melds placed so far, by place: runs, then sets (a leaf reads them all)
        self.stack: list[CostMeld] = [set_meld(0, 0)] * (self.nruns + len(shape.set_size))

    # ---------------------------------------------------------------- leaves
    def leaf(
        self,
        melds: list[CostMeld],
        left: tuple[int, int, int, int],
        open_places: int,
        joker_room: int,
    ) -> bool:
        """Cost a complete leaf; True stops the search (first mode)."""
        joker_count = self.joker_count
        seen = shared = 0  # ranks holding a set, and ranks holding several
        for m in melds:
            if not m[0] and m[1]:
                bit = 1 << m[1]
                shared |= seen & bit
                seen |= bit
        if shared:
            open_places, joker_room = self.regroup(melds, left)
            if open_places < 0:
                return False
        cost = open_places - (joker_room if joker_room < joker_count else joker_count)
        if cost > self.best or (cost == self.best and not self.collect):
            return False
        proven = True
        if cost and not self.available(melds, left):
            proven = False
            cost = self.exact(melds, left, cost)
            if cost > self.best or (cost == self.best and not self.collect):
                return False
        if cost < self.best:
            self.best = cost
            self.cands = 0
            self.sure = 0
        if not cost:
            return True  # the hand lays its contract: nothing is missing, nothing beats it
        if self.collect:
            self.gather(melds, left, open_places, joker_room, proven, shared)
        return self.first

    def regroup(self, melds: list[CostMeld], left: tuple[int, int, int, int]) -> tuple[int, int]:
        """Open places and joker room of a leaf where some rank holds several sets,
        for the split of each rank's naturals that makes the leaf cheapest."""
        left1, left2, left3, left4 = left
        tables = self.tables
        max_jokers = tables.max_jokers
        min_naturals = tables.min_naturals
        joker_count = self.joker_count
        open_places = joker_room = 0
        set_ranks = 0
        for m in melds:
            if m[0]:
                r_mask, run_length = m[2], m[3]
                o = run_length - popcount(r_mask)
                open_places += o
                joker_room += min(
                    min(max_jokers, run_length - min_naturals), o
                )  # (two-argument min is native)
            elif m[1] == 0:
                size = m[2]
                open_places += size
                joker_room += min(min(max_jokers, size - min_naturals), size)
            else:
                set_ranks |= 1 << m[1]
        # each rank's best splits; a rank with a single best split simply adds it
        choices: list[list[tuple[int, int]]] = []
        for r in range(1, 14):
            if not set_ranks >> r & 1:
                continue
            sizes: list[int] = []
            for m in melds:
                if not m[0] and m[1] == r:
                    sizes.append(m[2])
            opts = self.group_options(sizes, suit_count_key(r, left1, left2, left3, left4))
            if not opts:
                return -1, 0
            if len(opts) == 1:
                open_places += opts[0][0]
                joker_room += opts[0][1]
            else:
                choices.append(opts)
        if not choices:
            return open_places, joker_room
        best: tuple[int, int, int] | None = None
        for pick in product(*choices):
            o = open_places
            c = joker_room
            for x in pick:
                o += x[0]
                c += x[1]
            cost = o - (c if c < joker_count else joker_count)
            if best is None or (cost, -c) < (best[0], -best[2]):
                best = (cost, o, c)
        assert best is not None
        return best[1], best[2]

    def group_options(self, sizes: list[int], count_key: int) -> list[tuple[int, int]]:
        """(open places, joker room) of every split of a rank's naturals over its sets
        (the rank's copies per suit packed in ``count_key``: suit_count_key)."""
        # a function of the rule set and the counts alone: kept with the rule
        # set's tables (a few hundred entries at most), not recomputed per hand
        tables = self.tables
        cacheable = len(sizes) < 8 and max(sizes) < 32
        key = count_key
        if cacheable:
            for size in sizes:
                key = key << 5 | size
            key = key << 3 | len(sizes)
            got = tables.group_options.get(key)
            if got is not None:
                return got
        counts = [(count_key >> (3 * s)) & 7 for s in range(4)]
        max_jokers = tables.max_jokers
        min_naturals = tables.min_naturals
        distinct = tables.distinct
        total = sum(counts)
        dsuits = sum(1 for c in counts if c)
        opts: set[tuple[int, int]] = set()
        for ns in product(*[range(min(s, dsuits if distinct else total) + 1) for s in sizes]):
            if distinct:
                if not sets_fit(list(ns), counts):
                    continue
            elif sum(ns) > total:
                continue
            o = sum(sizes) - sum(ns)
            c = sum(
                min(max_jokers, s - min_naturals, s - n) for s, n in zip(sizes, ns, strict=True)
            )
            opts.add((o, c))
        # keep the splits no other beats on both counts
        got = [x for x in opts if not any(y[0] <= x[0] and y[1] >= x[1] and y != x for y in opts)]
        if cacheable:
            tables.group_options[key] = got
        return got

    def rest_count(self, kind: int) -> int:
        b = 1 << kind
        held1, held2, held3, held4 = self.held
        copies = (held1 & b != 0) + (held2 & b != 0) + (held3 & b != 0) + (held4 & b != 0)
        return self.tables.decks - copies

    def available(self, melds: list[CostMeld], left: tuple[int, int, int, int]) -> bool:
        """Cheap proof that the rest of the deck holds every wildcard of the leaf.

        Counts, for every kind, how many open places might ask for it (each run:
        every kind its window could still reach; each set: its rank's kinds) and
        compares with the rest of the deck.  False only means "not proven".
        Counts are kept as planes, like the hand's: d1 holds the kinds asked for
        at least once, d2 at least twice, and so on; r1..r4 likewise for what
        the rest of the deck holds.
        """
        left1, left2, left3, left4 = left
        r1, r2, r3, r4 = self.rest_planes
        top = self.tables.top
        distinct = self.tables.distinct
        d1 = d2 = d3 = d4 = 0
        set_ranks = 0  # ranks holding a set
        shared = 0  # ranks holding several
        fresh = fresh_need = 0  # sets of a rank the hand has none of
        for m in melds:
            if m[0]:
                s, r_mask, run_length = m[1], m[2], m[3]
                open_places = run_length - popcount(r_mask)
                if not open_places:
                    continue
                if s < 0:
                    return False  # an all-wildcard run: rare, costed exactly
                lo = (r_mask & -r_mask).bit_length() - 1
                hi = r_mask.bit_length() - 1
                ext = run_length - (hi - lo + 1)
                for pos in range(max(1, lo - ext), min(top, hi + ext) + 1):
                    if not r_mask >> pos & 1:
                        b = 1 << (s * 13 + (pos - 1) % 13)
                        if not d1 & b:
                            if not r1 & b:
                                return False
                            d1 |= b
                        elif not d2 & b:
                            if not r2 & b:
                                return False
                            d2 |= b
                        elif not d3 & b:
                            if not r3 & b:
                                return False
                            d3 |= b
                        elif not d4 & b and r4 & b:
                            d4 |= b
                        else:
                            return False
            else:
                r, size = m[1], m[2]
                if r == 0:
                    fresh += 1
                    if size > fresh_need:
                        fresh_need = size
                    continue
                bit = 1 << r
                shared |= set_ranks & bit
                set_ranks |= bit
        if fresh:
            spare_ranks = 0
            for r in range(1, 14):
                if set_ranks >> r & 1 or d1 & RANK_BITS[r]:
                    continue
                if rank_count(r, left1, left2, left3, left4, False):
                    continue
                supply = rank_count(r, r1, r2, r3, r4, False)
                suits = rank_count(r, r1, 0, 0, 0, True)
                if supply >= fresh_need and (not distinct or suits >= fresh_need):
                    spare_ranks += 1
            if spare_ranks < fresh:
                return False
        if not set_ranks:
            return True
        if distinct and shared:
            return False
        for r in range(1, 14):
            if not set_ranks >> r & 1:
                continue
            size = 0
            for m in melds:
                if not m[0] and m[1] == r:
                    size += m[2]
            if distinct:
                open_places = size - min(size, rank_count(r, left1, 0, 0, 0, True))
                if not open_places:
                    continue
                free = 0
                for s in range(4):
                    b = 1 << (s * 13 + r - 1)
                    if left1 & b:
                        continue  # the hand holds this suit: not a free place
                    # the rest holds one more than the runs may ask for
                    if not d1 & b:
                        free += r1 & b != 0
                    elif not d2 & b:
                        free += r2 & b != 0
                    elif not d3 & b:
                        free += r3 & b != 0
                    elif not d4 & b:
                        free += r4 & b != 0
                if free < open_places:
                    return False
            else:
                open_places = size - min(size, rank_count(r, left1, left2, left3, left4, False))
                if not open_places:
                    continue
                supply = rank_count(r, r1, r2, r3, r4, False) - rank_count(r, d1, d2, d3, d4, False)
                if supply < open_places:
                    return False
        return True

    def gather(
        self,
        melds: list[CostMeld],
        left: tuple[int, int, int, int],
        open_places: int,
        joker_room: int,
        proven: bool,
        shared: int,
    ) -> None:
        """Kinds that might fill an open place of this best leaf (``shared``: the
        ranks holding several of its sets, as bits).

        ``cands`` gets every kind that could (checked later by a search);
        ``sure`` the ones this leaf proves: the leaf passed the cheap
        availability proof, and one more card in an open place leaves open - 1
        places and at most one place less for jokers, so the cost drops unless
        that meld's open places were all joker room and the jokers ran short.
        """
        left1, left2, left3, left4 = left
        tables = self.tables
        top = tables.top
        max_jokers = tables.max_jokers
        min_naturals = tables.min_naturals
        distinct = tables.distinct
        joker_count = self.joker_count
        cands = self.cands
        sure = self.sure
        rest = self.rest
        spare = joker_count - (
            joker_room if joker_room < joker_count else joker_count
        )  # jokers no place takes
        short = (
            joker_count < joker_room
        )  # more joker room than jokers: one more natural always helps
        any_open = False
        for m in melds:
            if m[0]:
                s, r_mask, run_length = m[1], m[2], m[3]
                o = run_length - popcount(r_mask)
                if not o:
                    continue
                any_open = True
                if s < 0:
                    cands |= ALL_NATURAL_OUTS
                    continue
                lo = (r_mask & -r_mask).bit_length() - 1
                hi = r_mask.bit_length() - 1
                ext = run_length - (hi - lo + 1)
                wide = ext + (0 if tables.exact else spare)
                helps = proven and (short or o > min(max_jokers, run_length - min_naturals))
                for pos in range(max(1, lo - wide), min(top, hi + wide) + 1):
                    if not r_mask >> pos & 1:
                        rank = (pos - 1) % 13 + 1
                        bit = 1 << (rank * 4 + s)
                        cands |= bit
                        if (
                            helps
                            and lo - ext <= pos <= hi + ext
                            and rest >> (s * 13 + rank - 1) & 1
                        ):
                            sure |= bit
            else:
                r, size = m[1], m[2]
                if r:
                    have = rank_count(r, left1, left2, left3, left4, distinct)
                    alone = not shared >> r & 1
                    if size <= have and alone:
                        continue
                    any_open = True
                    o = size - have
                    helps = proven and alone and (short or o > min(max_jokers, size - min_naturals))
                    for s in range(4):
                        k = s * 13 + r - 1
                        # a lone set of distinct suits holds every suit left
                        if alone and distinct and (left1 >> k) & 1:
                            continue
                        bit = 1 << (r * 4 + s)
                        cands |= bit
                        if helps and rest >> k & 1:
                            sure |= bit
                else:
                    any_open = True
                    for rr in range(1, 14):
                        if not rank_count(rr, left1, left2, left3, left4, False):
                            cands |= 15 << (rr * 4)
        if any_open and self.rest_jokers > 0:
            cands |= 1
            if proven and short:
                sure |= 1
        self.cands = cands
        self.sure = sure

    # ---------------------------------------------------------------- exact leaf
    def exact(self, melds: list[CostMeld], left: tuple[int, int, int, int], floor: int) -> int:
        """The true cost of a leaf's melds, over every window, suit choice and filling.

        Only reached when the cheap availability proof fails (the hand holds
        every copy of a kind a wildcard needs, and the like), so plain
        enumeration is fine.
        """
        best = self.limit + 1
        for layout in product(*self.layouts(melds, left)):
            flat = [entry for option in layout for entry in option]
            got = self.fill(flat, floor, best)
            if got < best:
                best = got
                if got <= floor:
                    break
        return best

    def layouts(
        self, melds: list[CostMeld], left: tuple[int, int, int, int]
    ) -> list[list[list[Place]]]:
        """Per meld group, every way to pin down its open places.

        An option is a list of entries, one per meld: (joker cap, places, suits
        of the set's own naturals or None for a run / a set of any suits), each
        place being the natural kinds that may fill it (a joker may fill any).
        """
        left1, left2, left3, left4 = left
        tables = self.tables
        top = tables.top
        max_jokers = tables.max_jokers
        min_naturals = tables.min_naturals
        distinct = tables.distinct
        groups: list[list[list[Place]]] = []
        by_rank: dict[int, list[int]] = {}
        fresh: list[int] = []
        for m in melds:
            if m[0]:
                s, r_mask, run_length = m[1], m[2], m[3]
                cap = min(max_jokers, run_length - min_naturals)
                opts: list[list[Place]] = []
                for su in [s] if s >= 0 else [0, 1, 2, 3]:
                    if r_mask:
                        lo = (r_mask & -r_mask).bit_length() - 1
                        hi = r_mask.bit_length() - 1
                    else:
                        lo, hi = top, 1
                    for a in range(max(1, hi - run_length + 1), min(lo, top - run_length + 1) + 1):
                        places = [
                            [su * 13 + (pos - 1) % 13]
                            for pos in range(a, a + run_length)
                            if not r_mask >> pos & 1
                        ]
                        opts.append([(cap, places, None)])
                groups.append(opts)
            elif m[1] == 0:
                fresh.append(m[2])
            else:
                by_rank.setdefault(m[1], []).append(m[2])
        for r, sizes in by_rank.items():
            counts = tuple(copies_per_suit(r, left1, left2, left3, left4))
            key = (r, tuple(sizes), counts)
            got = tables.rank_layouts.get(key)
            if got is None:
                got = tables.rank_layouts[key] = rank_layouts_of(
                    r, sizes, list(counts), distinct, max_jokers, min_naturals
                )
            groups.append(got)
        if fresh:
            free = [
                r
                for r in range(1, 14)
                if r not in by_rank and not rank_count(r, left1, left2, left3, left4, False)
            ]
            opts_f: list[list[Place]] = []
            for combo in permutations(free, len(fresh)):
                option: list[Place] = []
                for r, size in zip(combo, fresh, strict=True):
                    kinds = [s * 13 + r - 1 for s in range(4)]
                    option.append(
                        (
                            min(max_jokers, size - min_naturals),
                            [kinds] * size,
                            set() if distinct else None,
                        )
                    )
                opts_f.append(option)
            groups.append(opts_f)
        return groups

    def fill(self, layout: list[Place], floor: int, bound: int) -> int:
        """Fewest cards from the rest of the deck that fill every place of a layout
        (``bound`` or more if none does better); stops early at ``floor``."""
        places: list[tuple[int, list[int]]] = []
        for mi, (cap, ps, _) in enumerate(layout):
            if cap < 0:
                return bound
            for kinds in ps:
                places.append((mi, kinds))
        filling = Filling(self, layout, places, floor, bound)
        filling.rec(0, 0)
        return filling.best


class Filling:
    """One layout's filling search (LeafCosting.fill): its state, and the recursion as a
    method with int arguments (compiled, a closure would box them)."""

    __slots__ = (
        "best",
        "caps",
        "cost",
        "floor",
        "joker_count",
        "jokers",
        "own",
        "places",
        "rest_jokers",
        "supply",
        "total",
    )

    def __init__(
        self,
        cost: LeafCosting,
        layout: list[Place],
        places: list[tuple[int, list[int]]],
        floor: int,
        bound: int,
    ) -> None:
        self.cost = cost
        self.joker_count = cost.joker_count
        self.rest_jokers = cost.rest_jokers
        self.places = places
        self.total = len(places)
        self.caps = [e[0] for e in layout]
        self.supply: dict[int, int] = {}
        self.jokers = [0] * len(layout)
        self.own: list[set[int] | None] = [None if e[2] is None else set(e[2]) for e in layout]
        self.floor = floor
        self.best = bound

    def rec(self, i: int, used_j: int) -> bool:
        joker_count = self.joker_count
        total = self.total
        # the cost is the places the hand's jokers do not take
        if total - min(joker_count, used_j + total - i) >= self.best:
            return False
        if i == total:
            self.best = total - (used_j if used_j < joker_count else joker_count)
            return self.best <= self.floor
        mi, kinds = self.places[i]
        jokers = self.jokers
        if jokers[mi] < self.caps[mi] and used_j - joker_count < self.rest_jokers:
            jokers[mi] += 1
            stop = self.rec(i + 1, used_j + 1)
            jokers[mi] -= 1
            if stop:
                return True
        suits = self.own[mi]
        supply = self.supply
        for k in kinds:
            have = supply.get(k)
            if have is None:
                have = supply[k] = self.cost.rest_count(k)
            if have <= 0:
                continue
            suit = k // 13
            if suits is not None:
                if suit in suits:
                    continue
                suits.add(suit)
            supply[k] = have - 1
            stop = self.rec(i + 1, used_j)
            supply[k] = have
            if suits is not None:
                suits.discard(suit)
            if stop:
                return True
        return False


# (joker cap, places (kinds that may fill each), suits of a distinct set's own naturals)
Place = tuple[int, list[list[int]], "set[int] | None"]


def product_lists(options: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [()]
    for opts in options:
        out = [(*acc, o) for acc in out for o in opts]
    return out


def rank_layouts_of(
    r: int, sizes: list[int], counts: list[int], distinct: bool, max_jokers: int, min_naturals: int
) -> list[list[Place]]:
    """Ways the hand's naturals of rank r can go to that rank's sets.

    A set takes as many as it can (more naturals never cost more); with several
    sets of the rank every split is tried, and with distinct suits every choice
    of suits, since the suits a set holds are the ones its places cannot take.
    """
    kinds = [s * 13 + r - 1 for s in range(4)]
    caps = [min(max_jokers, size - min_naturals) for size in sizes]
    out: list[list[Place]] = []
    if not distinct:
        total = sum(counts)
        for ns in product_lists([range(min(size, total) + 1) for size in sizes]):
            if sum(ns) > total or (len(sizes) == 1 and ns[0] != min(sizes[0], total)):
                continue
            out.append(
                [
                    (cap, [kinds] * (size - n), None)
                    for cap, size, n in zip(caps, sizes, ns, strict=True)
                ]
            )
        return out
    # suit by suit, which sets take the hand's copies of it: as many sets as
    # there are copies and sets with room (a set with room that could take an
    # unused natural of a suit it lacks is beaten by the one that takes it)
    nsets = len(sizes)
    picks: list[list[int]] = [[] for _ in sizes]

    def rec(suit: int) -> None:
        if suit == 4:
            out.append(
                [
                    (cap, [kinds] * (size - len(c)), set(c))
                    for cap, size, c in zip(caps, sizes, picks, strict=True)
                ]
            )
            return
        room = [i for i in range(nsets) if len(picks[i]) < sizes[i]]
        take = min(counts[suit], len(room))
        for chosen in combinations(room, take):
            for i in chosen:
                picks[i].append(suit)
            rec(suit + 1)
            for i in chosen:
                picks[i].pop()

    rec(0)
    return out
