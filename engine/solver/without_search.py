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

from .best_search import BY_SCORE, SetCandidate, SetMemo
from .best_so_far import BestSoFar, ChosenMeld
from .planes import SUIT_MASK, copies_per_suit, popcount, rank_count, sets_fit, suit_positions
from .skeletons import FIRST_FIELD, kept_run_skeletons
from .tables import ContractShape, RuleTables

# above every points total a leaf can reach (the floor of a node with no best yet is -1)
NO_FLOOR = 1 << 30


class LiveRun:
    """A run candidate of the shared tree: the fields of best_search.RunCandidate and
    the types it is live for."""

    __slots__ = ("cap", "kinds", "live", "min_jokers", "points", "r_mask", "score", "suit")

    def __init__(
        self,
        score: int,
        points: int,
        min_jokers: int,
        cap: int,
        kinds: int,
        suit: int,
        r_mask: int,
        live: int,
    ) -> None:
        self.score = score
        self.points = points
        self.min_jokers = min_jokers
        self.cap = cap
        self.kinds = kinds
        self.suit = suit
        self.r_mask = r_mask
        self.live = live


class WithoutSearch:
    """The recursions of search_without (BestSearch's, with a live mask a node)."""

    __slots__ = (
        "bests",
        "counts",
        "current_sets",
        "distinct",
        "exact",
        "joker_count",
        "joker_penalty",
        "left",
        "left1",
        "left2",
        "left3",
        "left4",
        "max_jokers",
        "meld_jokers",
        "min_naturals",
        "nruns",
        "nsets",
        "nt",
        "penalty",
        "rank_types",
        "ranks",
        "rest_cap",
        "rest_nat",
        "run_cands",
        "run_idx",
        "run_len",
        "set_idx",
        "set_max",
        "set_memo",
        "set_size",
        "suit_counts",
        "t_copies",
        "t_suit",
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
        run_cands: dict[int, list[LiveRun]],
        rest_nat: list[int],
        rest_cap: list[int],
        rank_types: list[int],
        t_copies: list[int],
        t_suit: list[int],
    ) -> None:
        self.bests = bests
        self.nt = len(bests)
        self.joker_count = joker_count
        self.exact = tables.exact
        self.max_jokers = tables.max_jokers
        self.min_naturals = tables.min_naturals
        self.joker_penalty = tables.joker_penalty
        self.penalty = tables.penalty
        self.set_max = tables.set_max
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
        key = tuple([avail.get(r, 0) for r in self.ranks])
        set_memo = self.set_memo
        got = set_memo.get(key)
        if got is not None:
            return got
        exact = self.exact
        meld_jokers = self.meld_jokers
        min_naturals = self.min_naturals
        set_max = self.set_max
        max_jokers = self.max_jokers
        joker_penalty = self.joker_penalty
        joker_count = self.joker_count
        penalty = self.penalty
        cands: dict[int, list[SetCandidate]] = {}
        for s in self.set_size:
            if s in cands:
                continue
            lst: list[SetCandidate] = []
            lo = s - meld_jokers
            if lo < min_naturals:
                lo = min_naturals
            for r, a in avail.items():
                hi = (s if a > s else a) if exact else (set_max if a > set_max else a)
                p = penalty[r]
                for n in range(hi, lo - 1, -1):
                    if exact:
                        j = s - n
                        lst.append((p * n + joker_penalty * j, p * n, j, j, r, n))
                    else:
                        j = s - n if n < s else 0
                        c = set_max - n
                        if c > max_jokers:
                            c = max_jokers
                        lst.append(
                            (
                                p * n + joker_penalty * (c if c < joker_count else joker_count),
                                p * n,
                                j,
                                c,
                                r,
                                n,
                            )
                        )
            lst.sort(key=FIRST_FIELD, reverse=True)
            cands[s] = lst
        set_memo[key] = cands
        return cands

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
        avail: dict[int, int] = {}
        if self.nruns:
            distinct = self.distinct
            min_naturals = self.min_naturals
            for r in self.ranks:
                a = rank_count(r, left1, left2, left3, left4, distinct)
                if a >= min_naturals:
                    avail[r] = a
            if not avail:
                return
        else:
            counts = self.counts
            for r in self.ranks:
                avail[r] = counts[r]
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


def run_spare(
    tables: RuleTables,
    held1: int,
    joker_count: int,
    counts: list[int],
    nruns: int,
    nsets: int,
) -> int:
    """search_best's ``spare`` (the positions a run may leave out) for this hand."""
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
    joker_penalty = tables.joker_penalty
    penalty = tables.penalty
    set_max = tables.set_max
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
    set_size = shape.set_size
    nsets = len(set_size)
    ranks: list[int] = []
    set_ub_nat: list[int] = []
    set_ub_cap: list[int] = []
    if nsets:
        ranks = [r for r in range(1, 14) if counts[r] >= min_naturals]
        need = min(set_size) - meld_jokers
        if need < min_naturals:
            need = min_naturals
        hosts = 0
        for r in ranks:
            hosts += rank_naturals[r] // need
        if hosts < nsets:
            return
        prev_s = 0
        ub = c = 0
        for s in set_size:
            if s != prev_s:
                prev_s = s
                need = s - meld_jokers
                if need < min_naturals:
                    need = min_naturals
                top_n = s if exact else set_max
                ub = -1
                for r in ranks:
                    a = counts[r]
                    if a >= need:
                        v = penalty[r] * (a if a < top_n else top_n)
                        if v > ub:
                            ub = v
                if ub < 0:
                    return
                c = (s if exact else set_max) - min_naturals
                c = min(c, meld_jokers if exact else max_jokers)
            set_ub_nat.append(ub)
            set_ub_cap.append(c)

    # ---- runs: the union of every hand less a type's kept skeletons, best first
    run_len = shape.run_len
    nruns = len(run_len)
    run_cands: dict[int, list[LiveRun]] = {}
    run_ub_nat: list[int] = []
    run_ub_cap: list[int] = []
    if nruns:
        run_points = tables.run_points
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
                lst: list[LiveRun] = []
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
                    shift = 13 * s
                    merged: dict[int, LiveRun] = {}
                    for (p, spare), live in groups.items():
                        for r_mask, naturals, run_length in kept_run_skeletons(
                            tables, p, length, meld_jokers, spare
                        ):
                            key2 = r_mask << 5 | run_length
                            old = merged.get(key2)
                            if old is not None:
                                old.live |= live
                                continue
                            min_jokers = run_length - naturals
                            if exact:
                                cap = min_jokers
                            else:
                                cap = 13 - naturals
                                if cap > max_jokers:
                                    cap = max_jokers
                            natural_points = run_points[r_mask]
                            if natural_points > top_nat:
                                top_nat = natural_points
                            if cap > top_cap:
                                top_cap = cap
                            kinds = (((r_mask >> 1) | (r_mask >> 14)) & SUIT_MASK) << shift
                            cand = LiveRun(
                                natural_points
                                + joker_penalty * (cap if cap < joker_count else joker_count),
                                natural_points,
                                min_jokers,
                                cap,
                                kinds,
                                s,
                                r_mask,
                                live,
                            )
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
    ub_nat = run_ub_nat + set_ub_nat
    ub_cap = run_ub_cap + set_ub_cap
    nreq = nruns + nsets
    rest_nat = [0] * (nreq + 1)
    rest_cap = [0] * (nreq + 1)
    for i in range(nreq - 1, -1, -1):
        rest_nat[i] = rest_nat[i + 1] + ub_nat[i]
        rest_cap[i] = rest_cap[i + 1] + ub_cap[i]
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
