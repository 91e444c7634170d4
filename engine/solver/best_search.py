"""The branch and bound for the best selection: runs first (skeletons), then
sets (in count space: once the runs are fixed every natural of a rank is as
good as any other for a set, except for its id).
"""

from __future__ import annotations

from typing import Final

from .best_so_far import BestSoFar, ChosenMeld
from .planes import copies_per_suit, rank_count, sets_fit
from .run_candidates import RunCandidate, hand_types, run_levels
from .skeletons import FIRST_FIELD
from .tables import ContractShape, RuleTables

# Candidates of the best-selection search, best first: (score bound, naturals'
# points, least jokers, most jokers, rank, naturals) for a set; a run's is a RunCandidate.
SetCandidate = tuple[int, int, int, int, int, int]


# set candidates by size, for what the runs left (the counts of the search's ranks)
SetMemo = dict[tuple[int, ...], dict[int, list[SetCandidate]]]

# above every points total a leaf can reach (the floor of a node with no best yet is -1)
NO_FLOOR: Final = 1 << 30


class BestSearch:
    """The branch and bound of search_best and search_without: runs first (skeletons),
    then sets (counts), for one best so far or several.

    With several (without_search.py: one per card type the hand goes without), a node
    carries ``live``, the bests its partial layout may still reach (bits of their
    indices): a run candidate's ``live`` names the hands it was made for, a set stays
    live for a type while the hand less the type still holds its rank's sets; a leaf
    is offered to every live best, and a node is pruned when its bound cannot reach the
    weakest live best.  search_best's one best is always live.

    The recursions are methods with plain int arguments, not closures: that is
    what the compiled solver (setup.py) calls without boxing a value.
    """

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
        tables = bests[0].tables
        shape = bests[0].shape
        self.bests = bests
        self.tables = tables
        self.nt = len(bests)
        self.joker_count = bests[0].joker_count
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
        # (the set search's state; used only by contracts with sets)
        self.set_memo: SetMemo = {}
        # the set search's per-leaf state, shared by rec_sets (reset by sets_phase)
        self.current_sets: dict[int, list[SetCandidate]] = {}
        self.left = [0] * 14  # naturals a rank still offers (sets of any suits)
        self.used: dict[int, list[int]] = {}  # set sizes per rank (distinct suits)
        # the planes the runs left
        self.left1 = 0
        self.left2 = 0
        self.left3 = 0
        self.left4 = 0
        self.suit_counts: dict[int, list[int]] = {}  # per rank, for what the runs left

    def floor(self, live: int) -> int:
        """The weakest best so far among the live types: what a leaf must reach."""
        return search_floor(self.bests, live)

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
            bests = self.bests
            for j in range(self.nt):
                if live >> j & 1:
                    bests[j].leaf(natural_points, min_jokers, cap, chosen)
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
                bests = self.bests
                for j in range(self.nt):
                    if live >> j & 1:
                        bests[j].leaf(natural_points, min_jokers, cap, chosen)
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
    if len(bests) == 1:
        return bests[0].best_points
    f = NO_FLOOR
    for i in range(len(bests)):
        if live >> i & 1:
            p = bests[i].best_points
            if p < f:
                f = p
    return f


def sets_available(
    ranks: list[int],
    counts: list[int],
    tables: RuleTables,
    nruns: int,
    left1: int,
    left2: int,
    left3: int,
    left4: int,
) -> dict[int, int]:
    """The naturals per rank the sets may take once the runs are chosen (empty: no set
    can be made)."""
    avail: dict[int, int] = {}
    if nruns:
        distinct = tables.distinct
        min_naturals = tables.min_naturals
        for r in ranks:
            a = rank_count(r, left1, left2, left3, left4, distinct)
            if a >= min_naturals:
                avail[r] = a
    else:
        for r in ranks:
            avail[r] = counts[r]
    return avail


def set_candidates(
    set_memo: SetMemo,
    ranks: list[int],
    tables: RuleTables,
    set_size: tuple[int, ...],
    meld_jokers: int,
    avail: dict[int, int],
) -> dict[int, list[SetCandidate]]:
    """The set candidates of each size for what the runs left (``avail``: naturals per
    rank), best first, memoised in ``set_memo``."""
    # runs only ever shrink ranks' counts, so the counts of `ranks` name the state
    key = tuple([avail.get(r, 0) for r in ranks])
    got = set_memo.get(key)
    if got is not None:
        return got
    exact = tables.exact
    min_naturals = tables.min_naturals
    set_max = tables.set_max
    max_jokers = tables.max_jokers
    joker_penalty = tables.joker_penalty
    penalty = tables.penalty
    cands: dict[int, list[SetCandidate]] = {}
    for s in set_size:
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
                            # (c <= max_jokers: c jokers if the hand has them, meld_jokers)
                            p * n + joker_penalty * (c if c < meld_jokers else meld_jokers),
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


def set_bounds(
    tables: RuleTables,
    shape: ContractShape,
    meld_jokers: int,
    counts: list[int],
    rank_naturals: list[int],
) -> tuple[list[int], list[int], list[int]] | None:
    """The ranks that can hold a set, and per set what it could lay at most (naturals'
    points, jokers); None when the hand cannot make the contract's sets."""
    exact = tables.exact
    max_jokers = tables.max_jokers
    min_naturals = tables.min_naturals
    penalty = tables.penalty
    set_max = tables.set_max
    set_size = shape.set_size
    nsets = len(set_size)
    ranks: list[int] = []
    set_ub_nat: list[int] = []
    set_ub_cap: list[int] = []
    if nsets:
        ranks = [r for r in range(1, 14) if counts[r] >= min_naturals]
        # a set needs `need` naturals of one rank, so a rank holds at most
        # count // need disjoint sets (rc counts every copy, for sets of
        # distinct suits too: each set takes at most one copy of a kind)
        need = min(set_size) - meld_jokers
        if need < min_naturals:
            need = min_naturals
        hosts = 0
        for r in ranks:
            hosts += rank_naturals[r] // need
        if hosts < nsets:
            return None
        prev_s = 0
        ub = c = 0
        for s in set_size:
            if s != prev_s:  # contracts repeat sizes: bound each size once
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
                    return None
                c = (s if exact else set_max) - min_naturals
                c = min(c, meld_jokers if exact else max_jokers)
            set_ub_nat.append(ub)
            set_ub_cap.append(c)
    return ranks, set_ub_nat, set_ub_cap


def rest_bounds(ub_nat: list[int], ub_cap: list[int]) -> tuple[list[int], list[int]]:
    """What the requirements from index i on could lay at most (naturals' points, jokers)."""
    nreq = len(ub_nat)
    rest_nat = [0] * (nreq + 1)
    rest_cap = [0] * (nreq + 1)
    for i in range(nreq - 1, -1, -1):
        rest_nat[i] = rest_nat[i + 1] + ub_nat[i]
        rest_cap[i] = rest_cap[i + 1] + ub_cap[i]
    return rest_nat, rest_cap


def search_best(
    bests: list[BestSoFar],
    types: list[int],
    held1: int,
    held2: int,
    held3: int,
    held4: int,
    rank_naturals: list[int],
    rank_suits: list[int],
) -> None:
    """Fill each best so far's best_* with the best selection, if there is one: of the
    hand (``types`` empty, one best), or of the hand less every copy of natural kind
    ``types[j]`` for each ``bests[j]`` (they share the rule set, contract and jokers)."""
    first = bests[0]
    tables = first.tables
    shape = first.shape
    joker_count = first.joker_count
    max_jokers = tables.max_jokers
    meld_jokers = (
        joker_count if joker_count < max_jokers else max_jokers
    )  # jokers one meld can take

    # ---- sets: ranks that can hold one, and what sets could lay at most (of the
    # whole hand: bounds of every hand less a type too)
    nsets = len(shape.set_size)
    counts = rank_suits if tables.distinct else rank_naturals
    bounds = set_bounds(tables, shape, meld_jokers, counts, rank_naturals)
    if bounds is None:
        return
    ranks, set_ub_nat, set_ub_cap = bounds
    rank_types, t_copies, t_suit = hand_types(types, held1, held2, held3, held4)

    # ---- runs: every skeleton of the hand (or of each hand less a type), best first
    run_len = shape.run_len
    nruns = len(run_len)
    run_cands: dict[int, list[RunCandidate]] = {}
    run_ub_nat: list[int] = []
    run_ub_cap: list[int] = []
    if nruns:
        levels = run_levels(
            tables, shape, held1, joker_count, meld_jokers, counts, types, t_copies, t_suit
        )
        if levels is None:
            return
        for length in run_len:
            lst, top_nat, top_cap = levels[length]
            run_cands[length] = lst
            run_ub_nat.append(top_nat)
            run_ub_cap.append(top_cap)

    everyone = (1 << len(bests)) - 1
    if nruns == 1 and not nsets:
        # one run: the candidates come best first, each one is a whole selection
        ix = shape.run_idx[0]
        for cand in run_cands[run_len[0]]:
            if cand.score < search_floor(bests, everyone):
                break
            if cand.min_jokers <= joker_count:
                meld: ChosenMeld = (True, ix, cand.suit, cand.r_mask, cand.min_jokers, cand.cap)
                live = cand.live
                for j in range(len(bests)):
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
