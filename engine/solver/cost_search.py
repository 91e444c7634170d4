"""The branch and bound for the fewest missing cards: runs (skeletons of what
is left), then sets (ranks by count); each complete choice is costed by
LeafCosting (cost_leaves.py, which explains the relaxation).
"""

from __future__ import annotations

from .cost_leaves import LeafCosting, set_meld
from .planes import rank_count, suit_positions
from .skeletons import FIRST_FIELD, NO_SKELETONS, Skeleton, SkeletonLevel, make_cost_skeletons
from .tables import NO_LIMIT, SKELETONS_KEPT


class CostSearch(LeafCosting):
    """The search over meld choices, runs then sets (see the module docstring)."""

    __slots__ = ()

    # The recursions are methods with plain int arguments, not closures: that is
    # what the compiled solver (setup.py) calls without boxing a value.
    def suit_skels(self, length: int, s: int, p: int) -> list[Skeleton]:
        # No leaf costs less than any of its skeletons' bounds, and the best cost
        # only falls: a skeleton over the best so far is never needed, now or
        # when this list is looked up again later.
        bound = self.best if self.best < self.limit else self.limit
        joker_count = self.joker_count
        prune = not self.collect
        if length >= 16 or joker_count >= 32 or bound >= 32:  # past what the key packs
            return self.make_skels(length, s, p, bound, prune)
        # the list is a function of the rule set and these small numbers alone,
        # so it is kept with the rule set's tables (packed into one int key)
        key = (
            ((((p << 2 | s) << 4 | length) << 5 | joker_count) << 5 | bound) << 1 | self.omit
        ) << 1 | prune
        table = self.tables.skeletons
        got = table.get(key)
        if got is None:
            if len(table) >= SKELETONS_KEPT:
                table.clear()
            got = table[key] = self.make_skels(length, s, p, bound, prune)
        return got

    def make_skels(self, length: int, s: int, p: int, bound: int, prune: bool) -> list[Skeleton]:
        """One suit's skeletons, by bound (stable: ties in the order they were made)."""
        made = make_cost_skeletons(
            p, length, self.tables, self.joker_count, bound, self.omit, prune
        )
        made.sort(key=FIRST_FIELD)  # Python's sort is stable
        return [
            Skeleton(
                lower_bound,
                open_places,
                joker_room,
                r_mask,
                run_length,
                s,
                (r_mask & -r_mask).bit_length() - 1,
            )
            for lower_bound, open_places, joker_room, r_mask, run_length in made
        ]

    def level(self, length: int, left1: int) -> SkeletonLevel:
        """Every skeleton of a run of this length on what is left, cheapest bound
        first (each suit's list comes sorted by bound: merged, ties keep their
        suit order)."""
        key = left1 << 4 | length
        got = self.level_memo.get(key)
        if got is not None:
            return got
        tables = self.tables
        ace_high = tables.top == 14
        limit = self.limit
        # (a suit with nothing left has no skeleton: no table look-up for it)
        p = suit_positions(left1, 0, ace_high)
        s0 = self.suit_skels(length, 0, p) if p else NO_SKELETONS
        p = suit_positions(left1, 1, ace_high)
        s1 = self.suit_skels(length, 1, p) if p else NO_SKELETONS
        p = suit_positions(left1, 2, ace_high)
        s2 = self.suit_skels(length, 2, p) if p else NO_SKELETONS
        p = suit_positions(left1, 3, ace_high)
        s3 = self.suit_skels(length, 3, p) if p else NO_SKELETONS
        wild: Skeleton | None = None
        cap = length - tables.min_naturals
        if cap >= 0:
            if cap > tables.max_jokers:
                cap = tables.max_jokers
            joker_room = min(cap, length)
            lower_bound = length - min(joker_room, self.joker_count)
            if lower_bound <= limit and lower_bound <= self.best:
                wild = Skeleton(lower_bound, length, joker_room, 0, length, -1, 0)
        lst: list[Skeleton] = []
        most_open = NO_LIMIT if wild is None else length
        i0 = i1 = i2 = i3 = 0
        n0, n1, n2, n3 = len(s0), len(s1), len(s2), len(s3)
        for lower_bound in range(limit + 1):
            while i0 < n0 and s0[i0].lower_bound == lower_bound:
                lst.append(s0[i0])
                i0 += 1
            while i1 < n1 and s1[i1].lower_bound == lower_bound:
                lst.append(s1[i1])
                i1 += 1
            while i2 < n2 and s2[i2].lower_bound == lower_bound:
                lst.append(s2[i2])
                i2 += 1
            while i3 < n3 and s3[i3].lower_bound == lower_bound:
                lst.append(s3[i3])
                i3 += 1
            if wild is not None and wild.lower_bound == lower_bound:
                lst.append(wild)
        for c in lst:
            if c.open_places < most_open:
                most_open = c.open_places
        got = self.level_memo[key] = SkeletonLevel(lst, most_open)
        return got

    def run(self) -> None:
        """Search runs (skeletons of what is left), then sets (count space)."""
        tables = self.tables
        shape = self.shape
        held1, held2, held3, held4 = self.held
        max_jokers = tables.max_jokers
        min_naturals = tables.min_naturals
        run_len = shape.run_len
        set_size = shape.set_size
        nruns = self.nruns
        nsets = len(set_size)
        for length in run_len:
            if not self.level(length, held1).skels:
                return
        rest_open = [0] * (nruns + nsets + 1)
        rest_joker_room = [0] * (nruns + nsets + 1)
        most = 0
        if nsets:
            for r in range(1, 14):
                most = max(most, rank_count(r, held1, held2, held3, held4, tables.distinct))
        mins: list[tuple[int, int]] = []
        for length in run_len:
            first = self.level(length, held1)
            most_jc = 0
            for c in first.skels:
                if c.joker_room > most_jc:
                    most_jc = c.joker_room
            mins.append((first.min_open, most_jc))
        for size in set_size:
            cap = min(max_jokers, size - min_naturals)
            if cap < 0:
                return
            mins.append((size - min(size, most), min(cap, size)))
        for i in range(nruns + nsets - 1, -1, -1):
            rest_open[i] = rest_open[i + 1] + mins[i][0]
            rest_joker_room[i] = rest_joker_room[i + 1] + mins[i][1]
        self.rest_open = rest_open
        self.rest_joker_room = rest_joker_room
        self.rec_runs(0, None, held1, held2, held3, held4, 0, 0)

    def rec_runs(
        self,
        i: int,
        prev: Skeleton | None,
        left1: int,
        left2: int,
        left3: int,
        left4: int,
        open_places: int,
        joker_room: int,
    ) -> bool:
        """Place run i and the ones after it; True stops the search."""
        nruns = self.nruns
        if i == nruns:
            return self.sets_phase(left1, left2, left3, left4, open_places, joker_room)
        run_len = self.shape.run_len
        length = run_len[i]
        # Later runs see only what the earlier ones left (lists hold only
        # skeletons that fit).  Two identical runs whose spans do not meet
        # see the same either way, so only their order by (suit, lowest
        # position) is searched; runs that overlap are tried both ways.
        here = self.level(length, left1)
        lst = here.skels
        if i and run_len[i - 1] != length:
            prev = None
        # what the runs still to come need at least, on what is left now
        later_open = self.rest_open[nruns]
        for j in range(i + 1, nruns):
            later = run_len[j]
            later_open += here.min_open if later == length else self.level(later, left1).min_open
        later_room = self.rest_joker_room[i + 1]
        joker_count = self.joker_count
        collect = self.collect
        stack = self.stack
        for c in lst:
            cand_open = c.open_places
            cand_room = c.joker_room
            if prev is not None and not c.span_kinds & prev.span_kinds:
                s = c.suit
                if s < prev.suit or (s == prev.suit and c.lo < prev.lo):
                    continue
            total_room = joker_room + cand_room + later_room
            lower_bound = (
                open_places
                + cand_open
                + later_open
                - (total_room if total_room < joker_count else joker_count)
            )
            best = self.best
            if lower_bound > best or (lower_bound == best and not collect):
                continue
            v = c.kinds
            nv = ~v
            stack[i] = c.meld
            if self.rec_runs(
                i + 1,
                c,
                (left1 & nv) | (left2 & v),
                (left2 & nv) | (left3 & v),
                (left3 & nv) | (left4 & v),
                left4 & nv,
                open_places + cand_open,
                joker_room + cand_room,
            ):
                return True
        return False

    def sets_phase(
        self,
        left1: int,
        left2: int,
        left3: int,
        left4: int,
        open_places: int,
        joker_room: int,
    ) -> bool:
        """Choose ranks for the sets on what the runs left; True stops the search."""
        if not self.shape.set_size:
            return self.leaf(self.stack, (left1, left2, left3, left4), open_places, joker_room)
        distinct = self.tables.distinct
        avail = self.set_avail
        left = self.set_left
        groups = self.set_groups
        most = 0
        none_left = False
        for r in range(1, 14):
            a = rank_count(r, left1, left2, left3, left4, distinct)
            avail[r] = a
            left[r] = a
            groups[r] = 0
            if a > most:
                most = a
            elif not a:
                none_left = True
        # ranks by most naturals first, then by rank (a counting sort: counts are small)
        order: list[int] = []
        for a in range(most, 0, -1):
            for r in range(1, 14):
                if avail[r] == a:
                    order.append(r)
        if none_left:
            order.append(0)
        self.set_planes = (left1, left2, left3, left4)
        self.set_order = order
        self.set_top = avail[order[0]] if order else 0
        return self.rec_sets(0, 0, open_places, joker_room)

    def rec_sets(self, i: int, start: int, open_places: int, joker_room: int) -> bool:
        """Place set i and the ones after it; True stops the search."""
        set_size = self.shape.set_size
        nsets = len(set_size)
        if i == nsets:
            return self.leaf(self.stack, self.set_planes, open_places, joker_room)
        tables = self.tables
        joker_count = self.joker_count
        collect = self.collect
        avail = self.set_avail
        left = self.set_left
        order = self.set_order
        groups = self.set_groups
        top_avail = self.set_top
        s = set_size[i]
        if i == 0 or set_size[i - 1] != s:
            start = 0
        cap = min(tables.max_jokers, s - tables.min_naturals)
        later_room = self.rest_joker_room[self.nruns + i + 1]
        for idx in range(start, len(order)):
            r = order[idx]
            if r == 0:
                cand_open = s
                cand_room = cap if cap < s else s
            elif groups[r]:
                # a second set of the rank: bound now, cost exactly at the leaf
                cand_open = s - min(s, avail[r])
                cand_room = cap if cap < s else s
            else:
                placed = s if left[r] > s else left[r]
                cand_open = s - placed
                cand_room = cap if cap < cand_open else cand_open
            # the sets still to place: identical ones come later in `order`
            # (no more naturals than this rank), the others at best the top
            a = avail[r] if r else 0
            later_open = 0
            chained = True
            for j in range(i + 1, nsets):
                sj = set_size[j]
                chained = chained and sj == set_size[j - 1]
                b = a if chained else top_avail
                later_open += sj - (sj if b > sj else b)
            total_room = joker_room + cand_room + later_room
            lower_bound = (
                open_places
                + cand_open
                + later_open
                - (total_room if total_room < joker_count else joker_count)
            )
            best = self.best
            if lower_bound > best or (lower_bound == best and not collect):
                continue
            taken = 0
            if r:
                groups[r] += 1
                taken = s if left[r] > s else left[r]
                left[r] -= taken
            self.stack[self.nruns + i] = set_meld(r, s)
            stop = self.rec_sets(i + 1, idx, open_places + cand_open, joker_room + cand_room)
            if r:
                groups[r] -= 1
                left[r] += taken
            if stop:
                return True
        return False
