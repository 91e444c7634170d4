"""The run candidates of the best-selection search: every kept skeleton of the hand,
or of each hand less a card type (best_selections_without's one tree), best first.

For several hands a candidate is made once, its ``live`` naming the hands (bits of the
types' indices) whose own search would make it: its skeleton among that hand's kept
skeletons, so it never takes the type.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Final

from .planes import SUIT_MASK, popcount, suit_positions
from .skeletons import kept_run_skeletons
from .tables import ContractShape, RuleTables


class RunCandidate:
    """A run candidate of the best-selection search: a class rather than a tuple, so
    that, compiled, the candidate loop (hundreds of candidates a search where the
    contract holds runs) reads its fields unboxed."""

    __slots__ = ("cap", "kinds", "live", "min_jokers", "points", "r_mask", "score", "suit")

    def __init__(
        self, score: int, points: int, min_jokers: int, cap: int, kinds: int, suit: int, r_mask: int
    ) -> None:
        self.score = score  # bound of its score: naturals' points and the most jokers
        self.points = points  # naturals' points
        self.min_jokers = min_jokers  # least jokers
        self.cap = cap  # most jokers
        self.kinds = kinds  # the natural kinds it takes (bit planes' layout)
        self.suit = suit
        self.r_mask = r_mask  # skeleton: its positions in the suit
        self.live = -1  # without_search: the types whose hands less the type hold it


# run candidates sort by their score (a C key function)
BY_SCORE: Final = attrgetter("score")

# the held types per rank of a search with none (never written)
NO_TYPES: Final = [0] * 14
NO_COPIES: Final[list[int]] = []

# per run length: its candidates best first, the most naturals' points and jokers of one
RunLevels = dict[int, tuple[list[RunCandidate], int, int]]


def run_spare(
    tables: RuleTables, held1: int, joker_count: int, counts: list[int], nruns: int, nsets: int
) -> int:
    """The positions a run skeleton may leave out (-1: any).

    Without exact sizes a natural a run could take but leaves in hand is worth its
    points more, for one joker less, so a skeleton that skips one is beaten by the one
    that takes it; unless that natural can serve another meld, or the hand holds more
    jokers than a run could take (then a joker in that place is worth more)."""
    if tables.exact:
        return -1
    most = 0
    for s in range(4):
        most = max(most, popcount((held1 >> (13 * s)) & SUIT_MASK))
    if not (joker_count < min(tables.max_jokers, 13 - most) and nruns == 1):
        return -1
    spare = 0
    if nsets:
        for r in range(1, 14):
            if counts[r] >= tables.min_naturals:
                spare |= 1 << r
        if spare & 2:
            spare |= 1 << 14
    return spare


def run_candidate(
    tables: RuleTables, joker_count: int, r_mask: int, naturals: int, run_length: int, suit: int
) -> RunCandidate:
    """The candidate of a skeleton (positions ``r_mask`` of ``suit``)."""
    min_jokers = run_length - naturals
    if tables.exact:
        cap = min_jokers
    else:
        cap = 13 - naturals
        if cap > tables.max_jokers:
            cap = tables.max_jokers
    natural_points = tables.run_points[r_mask]
    kinds = (((r_mask >> 1) | (r_mask >> 14)) & SUIT_MASK) << (13 * suit)
    score = natural_points + tables.joker_penalty * (cap if cap < joker_count else joker_count)
    return RunCandidate(score, natural_points, min_jokers, cap, kinds, suit, r_mask)


def hand_types(
    types: list[int], held1: int, held2: int, held3: int, held4: int
) -> tuple[list[int], list[int], list[int]]:
    """Per rank the held types of that rank (bits of their indices); per type its copies
    in the hand and its suit (-1 if not held: its hand less the type is the whole hand)."""
    nt = len(types)
    if not nt:
        return NO_TYPES, NO_COPIES, NO_COPIES
    t_copies = [0] * nt
    t_suit = [0] * nt
    rank_types = [0] * 14
    for j, t in enumerate(types):
        b = 1 << t
        c = (held1 & b != 0) + (held2 & b != 0) + (held3 & b != 0) + (held4 & b != 0)
        t_copies[j] = c
        t_suit[j] = t // 13 if c else -1
        if c:
            rank_types[t % 13 + 1] |= 1 << j
    return rank_types, t_copies, t_suit


def run_levels(
    tables: RuleTables,
    shape: ContractShape,
    held1: int,
    joker_count: int,
    meld_jokers: int,
    counts: list[int],
    types: list[int],
    t_copies: list[int],
    t_suit: list[int],
) -> RunLevels | None:
    """The run candidates per length of the hand (``types`` empty) or of each hand less
    a type; None when a length has none."""
    nruns = len(shape.run_len)
    nsets = len(shape.set_size)
    exact = tables.exact
    min_naturals = tables.min_naturals
    ace_high = tables.top == 14
    ps = (
        suit_positions(held1, 0, ace_high),
        suit_positions(held1, 1, ace_high),
        suit_positions(held1, 2, ace_high),
        suit_positions(held1, 3, ace_high),
    )
    spare = run_spare(tables, held1, joker_count, counts, nruns, nsets)
    # per type: its suit's positions less it, and its spare
    nt = len(types)
    t_ps: list[int] = NO_COPIES
    t_spare: list[int] = NO_COPIES
    if nt:
        t_ps = []
        t_spare = []
    for j, t in enumerate(types):
        if not t_copies[j]:
            t_ps.append(0)
            t_spare.append(spare)
            continue
        h1 = held1 & ~(1 << t)
        t_ps.append(suit_positions(h1, t_suit[j], ace_high))
        less = counts
        if not exact:
            less = list(counts)
            less[t % 13 + 1] -= 1 if tables.distinct else t_copies[j]
        t_spare.append(run_spare(tables, h1, joker_count, less, nruns, nsets))
    out: RunLevels = {}
    for length in shape.run_len:
        if length in out:
            continue
        need = max(min_naturals, length - meld_jokers)  # naturals a run takes at least
        lst: list[RunCandidate] = []
        for s in range(4):
            if not nt:
                if popcount(ps[s]) >= need:
                    for r_mask, naturals, run_length in kept_run_skeletons(
                        tables, ps[s], length, meld_jokers, spare
                    ):
                        lst.append(
                            run_candidate(tables, joker_count, r_mask, naturals, run_length, s)
                        )
                continue
            # the distinct (positions, spare) of this suit among the hands less a type
            groups: dict[tuple[int, int], int] = {}
            for j in range(nt):
                p = t_ps[j] if t_suit[j] == s else ps[s]
                if popcount(p) >= need:
                    key = (p, t_spare[j])
                    groups[key] = groups.get(key, 0) | 1 << j
            merged: dict[int, RunCandidate] = {}
            for (p, sp), live in groups.items():
                for r_mask, naturals, run_length in kept_run_skeletons(
                    tables, p, length, meld_jokers, sp
                ):
                    key2 = r_mask << 5 | run_length
                    old = merged.get(key2)
                    if old is not None:
                        old.live |= live
                        continue
                    cand = run_candidate(tables, joker_count, r_mask, naturals, run_length, s)
                    cand.live = live
                    merged[key2] = cand
                    lst.append(cand)
        if not lst:
            return None
        top_nat = top_cap = 0
        for cand in lst:
            if cand.points > top_nat:
                top_nat = cand.points
            if cand.cap > top_cap:
                top_cap = cand.cap
        lst.sort(key=BY_SCORE, reverse=True)
        out[length] = (lst, top_nat, top_cap)
    return out
