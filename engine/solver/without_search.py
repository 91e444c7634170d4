"""One branch and bound for the best selections of a hand less each of several card
types (best_selections_without): a tree over the whole hand keeping one best so far
per avoided type.

A node carries ``live``, the types (bits: indices into the search's list) its partial
layout still avoids: a run candidate is live for the types whose hand less the type
would have searched it (its skeleton among that hand's kept skeletons, so it never
takes the type), a set for the types whose hand less the type still holds the naturals
its rank's sets take.  A leaf is offered to every live type's best so far, whose own
order (points, jokers, ids of the hand less the type, the split) decides; a node is
pruned when its bound cannot reach the weakest best of its live types.  Each type's
answer is the one its own search_best would give: the same leaves, the same order.
"""

from __future__ import annotations

from .best_search import (
    BY_SCORE,
    RunCandidate,
    SetCandidate,
    SetMemo,
    rest_bounds,
    run_candidate,
    run_spare,
    set_bounds,
    set_candidates,
    sets_available,
)
from .best_so_far import BestSoFar, ChosenMeld
from .planes import copies_per_suit, popcount, sets_fit, suit_positions
from .skeletons import kept_run_skeletons
from .tables import ContractShape, RuleTables

# above every points total a leaf can reach (the floor of a node with no best yet is -1)
NO_FLOOR = 1 << 30


class WithoutSearch:
    """The recursions of search_without (BestSearch's, with a live mask a node)."""

    __slots__ = (
        "bests",
        "counts",
        "current_sets",
        "distinct",
        "joker_count",
        "joker_penalty",
        "left",
        "left1",
        "left2",
        "left3",
        "left4",
        "meld_jokers",
        "nruns",
        "nsets",
        "nt",
        "rank_types",
        "ranks",
        "rest_cap",
        "rest_nat",
        "run_cands",
        "run_idx",
        "run_len",
        "set_idx",
        "set_memo",
        "set_size",
        "suit_counts",
        "t_copies",
        "t_suit",
        "tables",
        "used",
    )

    def __init__(
        self,
        bests: list[BestSoFar],
        tables: RuleTables,
        shape: ContractShape,
        joker_count: int,
        meld_jokers: int,
        ranks: list[int],
        counts: list[int],
        run_cands: dict[int, list[RunCandidate]],
        rest_nat: list[int],
        rest_cap: list[int],
        rank_types: list[int],
        t_copies: list[int],
        t_suit: list[int],
    ) -> None:
        self.bests = bests
        self.tables = tables
        self.nt = len(bests)
        self.joker_count = joker_count
        self.joker_penalty = tables.joker_penalty
        self.distinct = tables.distinct
        self.meld_jokers = meld_jokers
        self.run_len = shape.run_len
        self.run_idx = shape.run_idx
        self.nruns = len(shape.run_len)
        self.run_cands = run_cands
        self.set_size = shape.set_size
        self.set_idx = shape.set_idx
        self.nsets = len(shape.set_size)
        self.ranks = ranks
        self.counts = counts
        self.rest_nat = rest_nat
        self.rest_cap = rest_cap
        self.rank_types = rank_types  # per rank: the held types of that rank (bits)
        self.t_copies = t_copies  # per type: the hand's copies of it
        self.t_suit = t_suit
        self.set_memo: SetMemo = {}
        self.current_sets: dict[int, list[SetCandidate]] = {}
        self.left = [0] * 14
        self.used: dict[int, list[int]] = {}
        self.left1 = 0
        self.left2 = 0
        self.left3 = 0
        self.left4 = 0
        self.suit_counts: dict[int, list[int]] = {}

    def floor(self, live: int) -> int:
        """The weakest best so far among the live types: what a leaf must reach."""
        return search_floor(self.bests, live)

    def leaves(
        self,
        natural_points: int,
        min_jokers: int,
        cap: int,
        chosen: tuple[ChosenMeld, ...],
        live: int,
    ) -> None:
        bests = self.bests
        for i in range(self.nt):
            if live >> i & 1:
                bests[i].leaf(natural_points, min_jokers, cap, chosen)

    def set_candidates(self, avail: dict[int, int]) -> dict[int, list[SetCandidate]]:
        return set_candidates(
            self.set_memo, self.ranks, self.tables, self.set_size, self.meld_jokers, avail
        )

    def rec_sets(
        self,
        i: int,
        start: int,
        natural_points: int,
        min_jokers: int,
        cap: int,
        chosen: tuple[ChosenMeld, ...],
        live: int,
    ) -> None:
        if i == self.nsets:
            self.leaves(natural_points, min_jokers, cap, chosen, live)
            return
        set_size = self.set_size
        s = set_size[i]
        candidates = self.current_sets[s]
        if i == 0 or set_size[i - 1] != s:
            start = 0
        joker_count = self.joker_count
        joker_penalty = self.joker_penalty
        k = self.nruns + i + 1
        base = natural_points + self.rest_nat[k]
        cap_rest = cap + self.rest_cap[k]
        loose = base + joker_penalty * (cap_rest if cap_rest < joker_count else joker_count)
        ix = self.set_idx[i]
        distinct = self.distinct
        left = self.left
        used = self.used
        rank_types = self.rank_types
        nt = self.nt
        floor = self.floor(live)
        for idx in range(start, len(candidates)):
            cand_score, cand_points, cand_min_jokers, cand_cap, r, n = candidates[idx]
            if loose + cand_score < floor:
                break
            tot = cap_rest + cand_cap
            bound = base + cand_points + joker_penalty * (tot if tot < joker_count else joker_count)
            if bound < floor:
                continue
            if min_jokers + cand_min_jokers > joker_count:
                continue
            child = live
            here = rank_types[r] & live
            meld: ChosenMeld = (False, ix, r, n, cand_min_jokers, cand_cap)
            if distinct:
                prev = used.get(r)
                if prev is None:
                    prev = used[r] = []
                rank_copies: list[int] = []
                if prev or here:
                    suit_counts = self.suit_counts
                    got = suit_counts.get(r)
                    if got is None:
                        got = suit_counts[r] = copies_per_suit(
                            r, self.left1, self.left2, self.left3, self.left4
                        )
                    rank_copies = got
                demands = [*prev, n]
                if prev and not sets_fit(demands, rank_copies):
                    continue
                if here:
                    for j in range(nt):
                        if here >> j & 1:
                            less = list(rank_copies)
                            less[self.t_suit[j]] = 0
                            if not sets_fit(demands, less):
                                child &= ~(1 << j)
                    if not child or (child != live and bound < self.floor(child)):
                        continue
                prev.append(n)
                self.rec_sets(
                    i + 1,
                    idx,
                    natural_points + cand_points,
                    min_jokers + cand_min_jokers,
                    cap + cand_cap,
                    (*chosen, meld),
                    child,
                )
                prev.pop()
            else:
                a = left[r]
                if a < n:
                    continue
                if here:
                    for j in range(nt):
                        if here >> j & 1 and a - n < self.t_copies[j]:
                            child &= ~(1 << j)
                    if not child or (child != live and bound < self.floor(child)):
                        continue
                left[r] = a - n
                self.rec_sets(
                    i + 1,
                    idx,
                    natural_points + cand_points,
                    min_jokers + cand_min_jokers,
                    cap + cand_cap,
                    (*chosen, meld),
                    child,
                )
                left[r] = a
            floor = self.floor(live)

    def sets_phase(
        self,
        left1: int,
        left2: int,
        left3: int,
        left4: int,
        natural_points: int,
        min_jokers: int,
        cap: int,
        chosen: tuple[ChosenMeld, ...],
        live: int,
    ) -> None:
        avail = sets_available(
            self.ranks, self.counts, self.tables, self.nruns, left1, left2, left3, left4
        )
        if not avail:
            return
        self.current_sets = self.set_candidates(avail)
        left = self.left
        for r, a in avail.items():
            left[r] = a
        self.left1 = left1
        self.left2 = left2
        self.left3 = left3
        self.left4 = left4
        self.suit_counts.clear()
        self.rec_sets(0, 0, natural_points, min_jokers, cap, chosen, live)

    def rec_runs(
        self,
        i: int,
        start: int,
        left1: int,
        left2: int,
        left3: int,
        left4: int,
        natural_points: int,
        min_jokers: int,
        cap: int,
        chosen: tuple[ChosenMeld, ...],
        live: int,
    ) -> None:
        if i == self.nruns:
            if self.nsets:
                self.sets_phase(
                    left1, left2, left3, left4, natural_points, min_jokers, cap, chosen, live
                )
            else:
                self.leaves(natural_points, min_jokers, cap, chosen, live)
            return
        run_len = self.run_len
        length = run_len[i]
        candidates = self.run_cands[length]
        if i == 0 or run_len[i - 1] != length:
            start = 0
        joker_count = self.joker_count
        joker_penalty = self.joker_penalty
        base = natural_points + self.rest_nat[i + 1]
        cap_rest = cap + self.rest_cap[i + 1]
        loose = base + joker_penalty * (cap_rest if cap_rest < joker_count else joker_count)
        ix = self.run_idx[i]
        floor = self.floor(live)
        for idx in range(start, len(candidates)):
            cand = candidates[idx]
            if loose + cand.score < floor:
                break
            kinds = cand.kinds
            if kinds & left1 != kinds:
                continue
            child = live & cand.live
            if not child:
                continue
            cand_points = cand.points
            cand_cap = cand.cap
            tot = cap_rest + cand_cap
            bound = base + cand_points + joker_penalty * (tot if tot < joker_count else joker_count)
            if bound < floor or (child != live and bound < self.floor(child)):
                continue
            cand_min_jokers = cand.min_jokers
            if min_jokers + cand_min_jokers > joker_count:
                continue
            other_kinds = ~kinds
            meld: ChosenMeld = (True, ix, cand.suit, cand.r_mask, cand_min_jokers, cand_cap)
            self.rec_runs(
                i + 1,
                idx,
                (left1 & other_kinds) | (left2 & kinds),
                (left2 & other_kinds) | (left3 & kinds),
                (left3 & other_kinds) | (left4 & kinds),
                left4 & other_kinds,
                natural_points + cand_points,
                min_jokers + cand_min_jokers,
                cap + cand_cap,
                (*chosen, meld),
                child,
            )
            floor = self.floor(live)


def search_floor(bests: list[BestSoFar], live: int) -> int:
    """The weakest best so far among the live types."""
    f = NO_FLOOR
    for i in range(len(bests)):
        if live >> i & 1:
            p = bests[i].best_points
            if p < f:
                f = p
    return f


def search_without(
    bests: list[BestSoFar],
    types: list[int],
    held1: int,
    held2: int,
    held3: int,
    held4: int,
    rank_naturals: list[int],
    rank_suits: list[int],
) -> None:
    """Fill each ``bests[j]`` as search_best would for the hand less every copy of natural
    kind ``types[j]`` (the bests share the rule set, contract and joker count)."""
    first = bests[0]
    tables = first.tables
    shape = first.shape
    joker_count = first.joker_count
    exact = tables.exact
    max_jokers = tables.max_jokers
    min_naturals = tables.min_naturals
    distinct = tables.distinct
    meld_jokers = joker_count if joker_count < max_jokers else max_jokers
    nt = len(types)
    everyone = (1 << nt) - 1

    # ---- each type: its copies, and the hand less it where it differs
    t_copies = [0] * nt
    t_suit = [0] * nt
    rank_types = [0] * 14
    counts = rank_suits if distinct else rank_naturals
    for j, t in enumerate(types):
        b = 1 << t
        c = (held1 & b != 0) + (held2 & b != 0) + (held3 & b != 0) + (held4 & b != 0)
        t_copies[j] = c
        t_suit[j] = t // 13 if c else -1  # (a type not held: its hand is the whole hand)
        if c:
            rank_types[t % 13 + 1] |= 1 << j

    # ---- sets: as search_best, for the whole hand (bounds of every hand less a type)
    nsets = len(shape.set_size)
    bounds = set_bounds(tables, shape, meld_jokers, counts, rank_naturals)
    if bounds is None:
        return
    ranks, set_ub_nat, set_ub_cap = bounds

    # ---- runs: the union of every hand less a type's kept skeletons, best first
    run_len = shape.run_len
    nruns = len(run_len)
    run_cands: dict[int, list[RunCandidate]] = {}
    run_ub_nat: list[int] = []
    run_ub_cap: list[int] = []
    if nruns:
        ace_high = tables.top == 14
        ps = [suit_positions(held1, s, ace_high) for s in range(4)]
        # per type: its suit's positions less it, and its spare
        t_ps: list[int] = []
        t_spare: list[int] = []
        spare_all = run_spare(tables, held1, joker_count, counts, nruns, nsets)
        for j, t in enumerate(types):
            if not t_copies[j]:
                t_ps.append(0)
                t_spare.append(spare_all)
                continue
            h1 = held1 & ~(1 << t)
            t_ps.append(suit_positions(h1, t_suit[j], ace_high))
            less = counts
            if not exact:
                less = list(counts)
                less[t % 13 + 1] -= 1 if distinct else t_copies[j]
            t_spare.append(run_spare(tables, h1, joker_count, less, nruns, nsets))
        ubs: dict[int, tuple[int, int]] = {}
        for length in run_len:
            if length not in ubs:
                lst: list[RunCandidate] = []
                need = length - meld_jokers
                if need < min_naturals:
                    need = min_naturals
                top_nat = top_cap = 0
                for s in range(4):
                    # the distinct (positions, spare) of this suit among the hands
                    groups: dict[tuple[int, int], int] = {}
                    for j in range(nt):
                        p = t_ps[j] if t_suit[j] == s else ps[s]
                        if popcount(p) >= need:
                            key = (p, t_spare[j])
                            groups[key] = groups.get(key, 0) | 1 << j
                    if not groups:
                        continue
                    merged: dict[int, RunCandidate] = {}
                    for (p, spare), live in groups.items():
                        for r_mask, naturals, run_length in kept_run_skeletons(
                            tables, p, length, meld_jokers, spare
                        ):
                            key2 = r_mask << 5 | run_length
                            old = merged.get(key2)
                            if old is not None:
                                old.live |= live
                                continue
                            cand = run_candidate(
                                tables, joker_count, r_mask, naturals, run_length, s
                            )
                            cand.live = live
                            if cand.points > top_nat:
                                top_nat = cand.points
                            if cand.cap > top_cap:
                                top_cap = cand.cap
                            merged[key2] = cand
                            lst.append(cand)
                if not lst:
                    return
                lst.sort(key=BY_SCORE, reverse=True)
                run_cands[length] = lst
                ubs[length] = (top_nat, top_cap)
            top_nat, top_cap = ubs[length]
            run_ub_nat.append(top_nat)
            run_ub_cap.append(top_cap)

    if nruns == 1 and not nsets:
        ix = shape.run_idx[0]
        for cand in run_cands[run_len[0]]:
            live = cand.live
            if cand.score < search_floor(bests, everyone):
                break
            if cand.min_jokers <= joker_count:
                meld: ChosenMeld = (True, ix, cand.suit, cand.r_mask, cand.min_jokers, cand.cap)
                for j in range(nt):
                    if live >> j & 1 and cand.score >= bests[j].best_points:
                        bests[j].leaf(cand.points, cand.min_jokers, cand.cap, (meld,))
        return
    rest_nat, rest_cap = rest_bounds(run_ub_nat + set_ub_nat, run_ub_cap + set_ub_cap)
    search = WithoutSearch(
        bests,
        tables,
        shape,
        joker_count,
        meld_jokers,
        ranks,
        counts,
        run_cands,
        rest_nat,
        rest_cap,
        rank_types,
        t_copies,
        t_suit,
    )
    if nruns:
        search.rec_runs(0, 0, held1, held2, held3, held4, 0, 0, 0, (), everyone)
    else:
        search.sets_phase(held1, held2, held3, held4, 0, 0, 0, (), everyone)
