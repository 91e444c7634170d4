"""best_selections_without's search: one branch and bound (best_search.BestSearch) over
the whole hand for the hands less each of several card types, one best so far a type.

A run candidate is made once for every hand less a type whose own search would make it
(its skeleton among that hand's kept skeletons, so it never takes the type), its
``live`` naming those hands; a set stays live for a type while the hand less the type
still holds its rank's sets.  A leaf goes to every live type's best so far, whose own
order (points, jokers, the ids of the hand less the type, the split) decides, and a
node is pruned when its bound cannot reach the weakest of its live bests: each type's
answer is the one its own search_best would give.
"""

from __future__ import annotations

from .best_search import (
    BY_SCORE,
    BestSearch,
    RunCandidate,
    rest_bounds,
    run_candidate,
    run_spare,
    search_floor,
    set_bounds,
)
from .best_so_far import BestSoFar, ChosenMeld
from .planes import popcount, suit_positions
from .skeletons import kept_run_skeletons


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
    search = BestSearch(
        bests,
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
