"""The best selection found so far, and the order that ranks selections.

Optimality (RULES.md, "The solver"): most penalty points laid, then fewest
jokers, then the smallest sorted list of physical card ids.  ``BestSoFar.leaf``
applies the first two on counts and looks at ids only on a tie; ``split`` hands
the ids out to the contract's melds where they can be split several ways.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import Card

from .card_ids import (
    KIND_IDS,
    KIND_MASK,
    RANK_IDS,
    HandIds,
    hand_ids,
    kind_levels,
    lex_less,
    lex_less_each,
    lowest_bits,
    split_distinct,
)
from .planes import skeleton_kinds
from .tables import ContractShape, RuleTables

# A meld in a search result: (is_run, contract index, suit or rank, skeleton or
# naturals count, least jokers, most jokers).
ChosenMeld = tuple[bool, int, int, int, int, int]


class FoundOne(Exception):
    """can_lay's early exit from the search."""


class BestSoFar:
    """Branch and bound state for the best selection."""

    __slots__ = (
        "best_chosen",
        "best_jokers",
        "best_key",
        "best_points",
        "first",
        "hand",
        "ids",
        "joker_count",
        "shape",
        "tables",
        "twins",
    )

    def __init__(
        self,
        tables: RuleTables,
        shape: ContractShape,
        hand: Sequence[Card],
        joker_count: int,
        twins: bool,
    ) -> None:
        self.twins = twins
        self.first = False  # can_lay: stop at the first selection found
        self.tables = tables
        self.shape = shape
        self.hand = hand
        self.joker_count = joker_count
        self.best_points = -1
        self.best_jokers = 0
        self.best_chosen: tuple[ChosenMeld, ...] | None = None
        self.best_key = -1  # ids best_chosen lays, -1 until a tie needs them
        self.ids: HandIds | None = None

    def leaf(
        self, natural_points: int, min_jokers: int, cap: int, chosen: tuple[ChosenMeld, ...]
    ) -> None:
        joker_count = self.joker_count
        if min_jokers > joker_count:
            return
        if self.first:
            raise FoundOne
        joker_penalty = self.tables.joker_penalty
        used = (cap if cap < joker_count else joker_count) if joker_penalty > 0 else min_jokers
        points = natural_points + joker_penalty * used
        if points > self.best_points or (points == self.best_points and used < self.best_jokers):
            self.best_points = points
            self.best_jokers = used
            self.best_chosen = chosen
            self.best_key = -1
        elif points == self.best_points and used == self.best_jokers:
            best = self.best_chosen
            assert best is not None
            # rule 3 on every id laid: the naturals, then the same lowest
            # jokers on both sides (they still count when one list of
            # naturals is a prefix of the other)
            jokers = self.id_table().joker_prefix[used]
            if self.best_key < 0:
                self.best_key = self.union(best) | jokers
            key = self.union(chosen) | jokers
            if key != self.best_key:
                if lex_less(key, self.best_key):
                    self.best_chosen = chosen
                    self.best_key = key
            elif lex_less_each(self.split(chosen, used), self.split(best, used)):
                self.best_chosen = chosen

    def id_table(self) -> HandIds:
        ids = self.ids
        if ids is None:
            natural_ids, jokers, by_id = hand_ids(self.hand)
            ids = self.ids = HandIds(natural_ids, jokers, self.tables.decks, self.twins, by_id)
        return ids

    def contents(self, chosen: tuple[ChosenMeld, ...]) -> list[int]:
        """Natural ids of each meld (contract order), the lowest the hand can give.

        Runs take the lowest copies of their kinds, then each set the lowest ids
        its rank has left: together the smallest ids for these kinds and counts.
        """
        ids = self.id_table()
        out = [0] * self.shape.n
        taken = [0] * ids.decks
        runs = 0
        sets: list[ChosenMeld] = []
        for d in chosen:
            if d[0]:
                m = ids.take(skeleton_kinds(d[3], d[2]), taken)
                out[d[1]] = m
                runs |= m
            else:
                sets.append(d)
        if not sets:
            return out
        free = ids.natural_ids & ~runs
        distinct = self.tables.distinct
        if len({d[2] for d in sets}) == len(sets):
            # one set per rank: each takes its rank's lowest free ids
            for d in sets:
                r = d[2]
                pool = free & RANK_IDS[r]
                if distinct:
                    firsts = 0  # each suit's lowest free id
                    for s in range(4):
                        x = pool & KIND_IDS[s * 13 + r - 1]
                        firsts |= x & -x
                    pool = firsts
                out[d[1]] = lowest_bits(pool, d[3])
            return out
        while sets:
            d = sets.pop(0)
            r = d[2]
            group = [d]
            rest: list[ChosenMeld] = []
            for e in sets:
                (group if e[2] == r else rest).append(e)
            sets = rest
            pool = free & RANK_IDS[r]
            if not distinct:
                for e in sorted(group, key=slot_of):
                    got = lowest_bits(pool, e[3])
                    pool ^= got
                    out[e[1]] = got
            elif len(group) == 1:
                firsts = 0  # each suit's lowest free id
                for s in range(4):
                    x = pool & KIND_IDS[s * 13 + r - 1]
                    firsts |= x & -x
                out[d[1]] = lowest_bits(firsts, d[3])
            else:
                group.sort(key=slot_of)
                parts = split_distinct(pool, [e[3] for e in group])
                for e, part in zip(group, parts, strict=True):
                    out[e[1]] = part
        return out

    def union(self, chosen: tuple[ChosenMeld, ...]) -> int:
        """Rule 3's key: the natural ids the selection lays."""
        key = 0
        for m in self.contents(chosen):
            key |= m
        return key

    def split(self, chosen: tuple[ChosenMeld, ...], used: int) -> list[int]:
        """Per-slot id masks (naturals and jokers) under the split rule.

        Slots are filled in contract order; where a slot belongs to a group of
        identical requirements, each meld of the group still unplaced is tried
        and the one giving the smallest id list wins (greedy is exact for a
        lexicographic order: a slot's choice never constrains the later slots'
        feasibility, only their ids).  Lower copies of a kind two melds share
        go to the earlier slot; spare jokers go to the last slots.
        """
        ids = self.id_table()
        contents = self.contents(chosen)
        shape = self.shape
        n = shape.n
        mins = [0] * n
        room = [0] * n
        for d in chosen:
            mins[d[1]] = d[4]
            room[d[1]] = d[5] - d[4]
        extra = used - sum(mins)
        jm = ids.joker_prefix
        if not shape.grouped and not ids.twins:
            # one meld per slot, no copies to share: only the spare jokers to
            # place, on the last slots first
            per_slot = mins
            if extra:
                per_slot = list(mins)
                slot = n - 1
                while extra:
                    take = room[slot] if room[slot] < extra else extra
                    per_slot[slot] += take
                    extra -= take
                    slot -= 1
            jat = 0
            for slot in range(n):
                j = per_slot[slot]
                if j:
                    contents[slot] |= jm[jat + j] ^ jm[jat]
                    jat += j
            return contents
        room_left = sum(room)
        jat = 0
        # copies only need handing out again when two melds share a kind
        twins = False
        if ids.twins:
            seen = 0
            for m in contents:
                k = m & KIND_MASK
                m >>= 52
                while m:
                    k |= m & KIND_MASK
                    m >>= 52
                if seen & k:
                    twins = True
                    break
                seen |= k
        levels = [kind_levels(m) for m in contents] if twins else []
        taken = [0] * ids.decks
        placed = [False] * n
        masks: list[int] = []
        for slot in range(n):
            best_mask = -1
            best_m = -1
            best_taken = taken
            best_js = 0
            for m in shape.group[slot]:
                if placed[m]:
                    continue
                # extras this slot must take: what the later slots cannot
                later = room_left - room[m]
                js = mins[m]
                if extra > later:
                    js += extra - later
                if twins:
                    t = list(taken)
                    mask = ids.take_levels(levels[m], t)
                else:
                    t = taken
                    mask = contents[m]
                mask |= jm[jat + js] ^ jm[jat]
                if best_m < 0 or lex_less(mask, best_mask):
                    best_mask, best_m, best_taken, best_js = mask, m, t, js
            placed[best_m] = True
            taken = best_taken
            extra -= best_js - mins[best_m]
            room_left -= room[best_m]
            jat += best_js
            masks.append(best_mask)
        return masks


def slot_of(d: ChosenMeld) -> int:
    return d[1]
