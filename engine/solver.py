"""The contract solver: which melds a hand lays for its round's contract.

This is the engine's hot path (bots and load tests ask it on every turn), so it
never looks at physical cards until the very end.  A hand becomes:

* unary bit-planes over the 52 natural kinds (bit ``suit * 13 + rank - 1``, the
  deck-0 card id): plane *i* holds the kinds of which the hand has more than *i*
  copies, so "does this run fit" is one AND and "take it" a few ANDs/ORs;
* a joker count.

A run is searched as a *skeleton*: the natural positions it uses in one suit
(positions 1..14, 14 being an ace above the king); the jokers it needs and may
take follow from the skeleton's span.  A set is searched in count space (rank,
number of naturals): once the runs are fixed every natural of a rank is as good
as any other for a set, except for card ids, and ids are only looked at when two
selections tie on points and jokers, and to build the answer.  Everything is
driven by the RuleSet's fields (sizes exact or minimum, set limits and suits,
ace high, jokers per meld, naturals per meld, penalties), never by its name.

Optimality (RULES.md, "The solver"): most penalty points laid, then fewest
jokers, then the smallest sorted list of physical card ids.  Where the same
cards can be split into the contract's melds in several ways (which meld gets a
spare joker, which of two twin runs gets the deck-0 copies, whether 9C tops the
sequence or completes the group), the engine takes the split whose melds, read
in contract order, have the smallest sorted id lists; see ``_Best.split``.

``missing_cards`` and ``analyse`` answer "how many cards short, and which help"
with a second branch and bound (see "missing cards" below).

Nothing is cached between calls except tables derived from a rule set: penalty
tables, the contract's requirement lists, and (filled as hands ask, bounded)
the run skeletons of one suit's positions and the splits of one rank's counts
over several sets.  Each is a function of the rule set and a few small numbers,
never of a whole hand, so every call still does its own search.

Speed: the module is plain typed Python written to compile well with mypyc
(setup.py builds it in place; ``COMPILED`` says which form runs).  Hot
recursions are methods with int arguments rather than closures, skeletons are
small classes rather than tuples, and kind sets are bit masks: compiled, those
run unboxed.  The interpreted source gives identical answers
(tests/unit/test_solver_build.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import fields
from itertools import combinations, permutations, product
from operator import itemgetter
from typing import Any, Final

from engine.cards import JOKER_RANK, NO_SUIT, Card
from engine.errors import InvalidActionError
from engine.melds import Meld
from engine.rulesets import PRESETS, MeldKind, RuleSet

__all__ = [
    "COMPILED",
    "Analysis",
    "Selection",
    "analyse",
    "best_selection",
    "can_lay",
    "missing_cards",
]

# True when this module runs as the C extension mypyc built from this file (setup.py)
COMPILED = not __file__.endswith(".py")

# "no limit" for joker caps and set sizes; larger than any hand or deck can use
_NOLIMIT: Final = 99
_SUIT13: Final = (1 << 13) - 1
# bits of every suit's card of one rank; index 1..13 (0 and 14 unused)
_RANK_BITS: Final = tuple(
    sum(1 << (s * 13 + r - 1) for s in range(4)) if 1 <= r <= 13 else 0 for r in range(15)
)
_ALL52: Final = (1 << 52) - 1
# every natural kind as an out bit (rank * 4 + suit: bits 4..55; bit 0 is the joker)
_ALL_NATURAL_OUTS: Final = ((1 << 56) - 1) ^ 15


class Selection:
    """The melds a hand lays for its contract, best first by the solver's order.

    A value, compared and hashed by its fields, and read-only: its attributes are
    final (type checkers refuse an assignment; the compiled class raises
    AttributeError).  A plain class rather than a frozen dataclass: compiled
    (setup.py), it is a native class built in a tenth of the time the
    dataclass's generated __init__ takes, which the compiled module would still
    run interpreted.
    """

    __slots__ = ("jokers", "melds", "points")

    def __init__(self, melds: tuple[Meld, ...], points: int, jokers: int) -> None:
        self.melds: Final = melds  # one per contract requirement, in the contract's order
        self.points: Final = points  # penalty points laid
        self.jokers: Final = jokers  # jokers used

    def _fields(self) -> tuple[tuple[Meld, ...], int, int]:
        return (self.melds, self.points, self.jokers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selection) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Selection(melds={self.melds!r}, points={self.points!r}, jokers={self.jokers!r})"


class Analysis:
    """Everything ``analyse`` says of a hand: a read-only value like Selection."""

    __slots__ = ("best", "feasible", "missing", "outs")

    def __init__(
        self,
        feasible: bool,
        best: Selection | None,
        missing: int | None,
        outs: tuple[tuple[int, int], ...],
    ) -> None:
        self.feasible: Final = feasible
        self.best: Final = best
        # fewest extra cards (from the rest of the deck) that make the contract
        # layable; 0 when it already is, None when more than the asked limit
        self.missing: Final = missing
        # (rank, suit) kinds, (0, -1) for a joker, one of which lowers ``missing``
        self.outs: Final = outs

    def _fields(
        self,
    ) -> tuple[bool, Selection | None, int | None, tuple[tuple[int, int], ...]]:
        return (self.feasible, self.best, self.missing, self.outs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Analysis) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Analysis(feasible={self.feasible!r}, best={self.best!r}, "
            f"missing={self.missing!r}, outs={self.outs!r})"
        )


def _slot_setter(cls: type[Any], names: tuple[str, str, str, str, str]) -> Any:
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
_meld_setter = _slot_setter(Meld, _MELD_FIELDS)


def _new_meld(kind: MeldKind, cards: tuple[Card, ...], rank: int, suit: int) -> Meld:
    if _meld_setter is None:
        return Meld(kind, cards, rank, suit)
    meld: Meld = _meld_setter(kind, cards, rank, suit, -1)
    return meld


# --------------------------------------------------------------------------- rule tables
class _Round:
    __slots__ = ("group", "grouped", "is_run", "n", "run_idx", "run_len", "set_idx", "set_size")

    def __init__(self, reqs: Sequence[tuple[bool, int]]) -> None:
        self.n = len(reqs)
        self.is_run = tuple(is_run for is_run, _ in reqs)
        groups: dict[tuple[bool, int], list[int]] = {}
        for i, req in enumerate(reqs):
            groups.setdefault(req, []).append(i)
        # group[slot]: the melds that may fill a slot (its identical requirements)
        self.group = tuple(tuple(groups[req]) for req in reqs)
        self.grouped = any(len(g) > 1 for g in groups.values())
        # runs are searched first: a run pins exact kinds, a set only a rank
        self.run_idx = tuple(i for i, (is_run, _) in enumerate(reqs) if is_run)
        self.run_len = tuple(size for is_run, size in reqs if is_run)
        self.set_idx = tuple(i for i, (is_run, _) in enumerate(reqs) if not is_run)
        self.set_size = tuple(size for is_run, size in reqs if not is_run)


class _Prep:
    """Everything the solver derives from a rule set, built once per RuleSet object."""

    __slots__ = (
        "deck_jokers",
        "decks",
        "distinct",
        "exact",
        "group_options",
        "jpen",
        "maxj",
        "minnat",
        "pen",
        "pts",
        "rank_layouts",
        "rounds",
        "rules",
        "run_skeletons",
        "skeletons",
        "smax",
        "top",
    )

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.exact = rules.exact_contract_sizes
        self.smax = _NOLIMIT if rules.set_max is None else rules.set_max
        self.distinct = rules.set_distinct_suits
        self.top = rules.highest_run_rank
        self.maxj = _NOLIMIT if rules.max_jokers_per_meld is None else rules.max_jokers_per_meld
        self.minnat = rules.min_naturals_per_meld
        self.jpen = rules.penalty_of_rank(JOKER_RANK)
        self.decks = rules.decks
        self.deck_jokers = rules.jokers
        # pen[rank] for ranks 1..13, pen[14] is an ace standing high
        pen = [rules.penalty_of_rank(r) for r in range(14)] + [rules.penalty_of_rank(1)]
        pen[0] = self.jpen
        self.pen = pen
        # points of a run skeleton, indexed by its position mask (bits 1..14)
        pts = [0] * (1 << 15)
        for m in range(2, 1 << 15, 2):
            low = m & -m
            pts[m] = pts[m ^ low] + pen[low.bit_length() - 1]
        self.pts = pts
        # tables of the cost search filled as hands ask for them: they depend on
        # the rule set and a handful of small counts, never on the rest of a hand
        self.group_options: dict[int, list[tuple[int, int]]] = {}
        self.skeletons: dict[int, list[_Skel]] = {}
        self.run_skeletons: dict[int, list[tuple[int, int, int]]] = {}  # _run_skeletons
        self.rank_layouts: dict[
            tuple[int, tuple[int, ...], tuple[int, ...]], list[list[_Place]]
        ] = {}
        self.rounds = tuple(
            _Round(tuple((m.kind is MeldKind.RUN, m.size) for m in c.melds))
            for c in rules.contracts
        )


# run skeletons kept per rule set, for each of the two searches (_Cost.suit_skels,
# _run_skeletons): lists of about seven small objects on average, so a full table
# is under 10 MB; emptied when full
_SKELETONS_KEPT: Final = 8_000

_PREPS: OrderedDict[str, _Prep] = OrderedDict()
_PREPS_KEPT: Final = 64


def _prep(rules: RuleSet) -> _Prep:
    # Keyed by the rule set's stable hash (computed once, when the rule set is
    # made), not by the object: a service decodes a new RuleSet object with every
    # stored game, and equal rule sets must share their tables.  Least recently
    # used first out, so a few custom rule sets never evict the presets' tables.
    # (bots think in threads: another thread may evict between two steps here, so
    # a KeyError from the bookkeeping is harmless, never a reason to fail)
    # (try/except, not contextlib.suppress: this runs on every solver call)
    key = rules.hash
    pr = _PREPS.get(key)
    if pr is None:
        pr = _PREPS[key] = _Prep(rules)
        if len(_PREPS) > _PREPS_KEPT:
            try:  # noqa: SIM105 (see above)
                _PREPS.popitem(last=False)
            except KeyError:
                pass
    elif len(_PREPS) > 1:
        try:  # noqa: SIM105 (see above)
            _PREPS.move_to_end(key)
        except KeyError:
            pass
    return pr


def _round(pr: _Prep, round_number: int) -> _Round:
    if not 1 <= round_number <= len(pr.rounds):
        raise InvalidActionError(
            f"rule set {pr.rules.name!r} has rounds 1..{len(pr.rounds)}, not {round_number}"
        )
    return pr.rounds[round_number - 1]


# --------------------------------------------------------------------------- hand encoding
def _planes(hand: Sequence[Card]) -> tuple[int, int, int, int, int]:
    """Unary count planes of the hand's natural kinds, and its joker count."""
    h1 = h2 = h3 = h4 = 0
    nj = 0
    for c in hand:
        r = c.rank
        if r == 0:
            nj += 1
            continue
        b = 1 << (c.suit * 13 + r - 1)
        if not h1 & b:
            h1 |= b
        elif not h2 & b:
            h2 |= b
        elif not h3 & b:
            h3 |= b
        elif not h4 & b:
            h4 |= b
        else:
            raise InvalidActionError(f"more than four copies of {c.code} in a hand")
    return h1, h2, h3, h4, nj


def _positions(h1: int, suit: int, ace_high: bool) -> int:
    """Position mask (bits 1..13, and 14 for a high ace) of a suit's kinds in h1."""
    m = (h1 >> (suit * 13)) & _SUIT13
    p = m << 1
    if ace_high and m & 1:
        p |= 1 << 14
    return p


def _kinds_of(r_mask: int, suit: int) -> int:
    """Kind bits of a run skeleton's positions (position 14 is the ace)."""
    return (((r_mask >> 1) | (r_mask >> 14)) & _SUIT13) << (suit * 13)


def _popcount(x: int) -> int:
    """Set bits of x (below 2**56). Compiled, int.bit_count() is a boxed method
    call; these few native operations are not."""
    x -= (x >> 1) & 0x55555555555555
    x = (x & 0x33333333333333) + ((x >> 2) & 0x33333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 0x7F


def _suit_bits(x: int) -> int:
    """Set bits among bits 0, 13, 26 and 39 of x (one rank's four suits)."""
    return (x & 1) + (x >> 13 & 1) + (x >> 26 & 1) + (x >> 39 & 1)


def _rank_count(r: int, h1: int, h2: int, h3: int, h4: int, distinct: bool) -> int:
    """Naturals of rank r a single set could take from these planes."""
    n = _suit_bits(h1 >> (r - 1))
    if distinct or not n:
        return n
    if h2 & _RANK_BITS[r]:
        sh = r - 1
        n += _suit_bits(h2 >> sh) + _suit_bits(h3 >> sh) + _suit_bits(h4 >> sh)
    return n


def _suit_counts(r: int, h1: int, h2: int, h3: int, h4: int) -> list[int]:
    out = []
    for s in range(4):
        b = 1 << (s * 13 + r - 1)
        out.append((h1 & b != 0) + (h2 & b != 0) + (h3 & b != 0) + (h4 & b != 0))
    return out


def _suit_count_key(r: int, h1: int, h2: int, h3: int, h4: int) -> int:
    """The copies of rank r per suit in these planes, packed 3 bits a suit (suit 0 lowest)."""
    sh = r - 1
    return (
        _suit_bits3(h1 >> sh)
        + _suit_bits3(h2 >> sh)
        + _suit_bits3(h3 >> sh)
        + _suit_bits3(h4 >> sh)
    )


def _suit_bits3(x: int) -> int:
    """Bits 0, 13, 26 and 39 of x moved to bits 0, 3, 6 and 9."""
    return (x & 1) | (x >> 10 & 8) | (x >> 20 & 64) | (x >> 30 & 512)


def _sets_fit(demands: list[int], counts: list[int]) -> bool:
    """Whether sets of distinct suits with these sizes fit one rank's suit counts.

    Gale-Ryser: the t largest demands must fit in sum(min(count, t)).
    """
    if sum(demands) > sum(counts):
        return False
    ds = sorted(demands, reverse=True)
    total = 0
    for t, d in enumerate(ds, start=1):
        total += d
        room = 0
        for c in counts:
            room += c if c < t else t
        if total > room:
            return False
    return True


# --------------------------------------------------------------------------- run skeletons
def _run_skeletons(
    pr: _Prep, p: int, length: int, jeff: int, spare: int
) -> list[tuple[int, int, int]]:
    """_skeletons for the rule set's exactness and minimum naturals, kept with the
    rule set's tables: a function of a suit's positions and a few small numbers."""
    if length >= 32 or jeff >= 32 or spare >= 1 << 15:  # past what the key packs
        return _skeletons(p, length, pr.exact, jeff, pr.minnat, spare)
    key = (((p << 5 | length) << 5 | jeff) << 16) | (spare + 1)
    table = pr.run_skeletons
    got = table.get(key)
    if got is None:
        if len(table) >= _SKELETONS_KEPT:
            table.clear()
        got = table[key] = _skeletons(p, length, pr.exact, jeff, pr.minnat, spare)
    return got


def _skeletons(
    p: int, length: int, exact: bool, jeff: int, minnat: int, spare: int = -1
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
    if jeff == 0:
        # no joker to fill a gap: runs of consecutive positions only
        if length < minnat:
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
        need = length - jeff
        if need < minnat:
            need = minnat
        win = (1 << length) - 1
        x = p
        while x:
            low = x & -x
            x ^= low
            w = p & (win * low)
            c = _popcount(w)
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
    if nb < minnat:
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
            ln = span if span > length else length
            nn = k - i + 1
            need = ln - jeff
            if need < minnat:
                need = minnat
            if nn < need:
                continue
            out.append((acc, nn, ln))
            if nn > need and k - i >= 2:
                inner = [b for b in bits[i + 1 : k] if spare >> b & 1]
                for drop in range(1, min(nn - need, len(inner)) + 1):
                    for gone in combinations(inner, drop):
                        m = acc
                        for g in gone:
                            m ^= 1 << g
                        out.append((m, nn - drop, ln))
    return out


# --------------------------------------------------------------------------- physical ids
# Sets of physical cards are int masks over card ids.  A sorted id list is then
# the mask read from bit 0 up, and list comparison only needs the lowest bit
# where two masks differ (see _lex_less).
_KIND_MASK: Final = (1 << 52) - 1
_RANK_IDS: Final = tuple(
    sum(1 << (d * 52 + s * 13 + r - 1) for d in range(4) for s in range(4)) if 1 <= r <= 13 else 0
    for r in range(15)
)
_KIND_IDS: Final = tuple(sum(1 << (d * 52 + k) for d in range(4)) for k in range(52))


def _lex_less(a: int, b: int) -> bool:
    """sorted(ids of a) < sorted(ids of b), as Python compares lists."""
    x = a ^ b
    if not x:
        return False
    low = x & -x
    if a & low:
        # a's next id is smaller, unless b has run out (b is a prefix of a)
        return b >> low.bit_length() != 0
    return a >> low.bit_length() == 0


def _tuple_less(a: Sequence[int], b: Sequence[int]) -> bool:
    for x, y in zip(a, b, strict=True):
        if x != y:
            return _lex_less(x, y)
    return False


def _low_bits(x: int, n: int) -> int:
    out = 0
    for _ in range(n):
        low = x & -x
        out |= low
        x ^= low
    return out


class _Ids:
    """The hand's physical ids, looked at only when ids decide (ties, the answer)."""

    __slots__ = ("by_deck", "by_id", "decks", "hid", "joker_prefix", "twins")

    def __init__(
        self, hid: int, jokers: list[int], decks: int, twins: bool, by_id: dict[int, Card]
    ) -> None:
        self.by_id = by_id  # the hand's cards, to give back the very objects
        self.hid = hid
        self.decks = decks
        self.twins = twins
        # joker_prefix[k]: the mask of the hand's k lowest joker ids
        prefix = [0]
        if jokers:
            jokers.sort()
            for j in jokers:
                prefix.append(prefix[-1] | 1 << j)
        self.joker_prefix = prefix
        # by_deck[d]: kinds (bit suit*13+rank-1) of which the hand holds deck d's copy
        if decks == 2:
            self.by_deck: tuple[int, ...] = (hid & _KIND_MASK, hid >> 52)
        else:
            self.by_deck = tuple((hid >> (52 * d)) & _KIND_MASK for d in range(decks))

    def take(self, m: int, taken: list[int]) -> int:
        """Ids of the lowest free copy of each kind in m; marks them in ``taken``."""
        ids = 0
        for d, have in enumerate(self.by_deck):
            if not m:
                break
            t = m & have & ~taken[d]
            if t:
                ids |= t << (52 * d)
                taken[d] |= t
                m ^= t
        return ids

    def take_levels(self, levels: Sequence[int], taken: list[int]) -> int:
        """take() for a kind multiset: one of each kind in levels[0], a second of
        those in levels[1], and so on."""
        ids = 0
        for m in levels:
            ids |= self.take(m, taken)
        return ids


def _levels(ids: int) -> tuple[int, ...]:
    """Kind multiset of an id mask, as unary levels (kinds used at least 1, 2, ... times)."""
    lv = [0, 0, 0, 0]
    while ids:
        x = ids & _KIND_MASK
        lv[3] |= lv[2] & x
        lv[2] |= lv[1] & x
        lv[1] |= lv[0] & x
        lv[0] |= x
        ids >>= 52
    return tuple(m for m in lv if m)


# --------------------------------------------------------------------------- best selection
# A meld in a search result: (is_run, contract index, suit or rank, skeleton or
# naturals count, least jokers, most jokers).
_Desc = tuple[bool, int, int, int, int, int]


class _Found(Exception):
    """can_lay's early exit from the search."""


class _Best:
    """Branch and bound state for the best selection."""

    __slots__ = (
        "best_j",
        "best_key",
        "best_pts",
        "best_sol",
        "first",
        "hand",
        "ids",
        "nj",
        "pr",
        "rd",
        "twins",
    )

    def __init__(self, pr: _Prep, rd: _Round, hand: Sequence[Card], nj: int, twins: bool) -> None:
        self.twins = twins
        self.first = False  # can_lay: stop at the first selection found
        self.pr = pr
        self.rd = rd
        self.hand = hand
        self.nj = nj
        self.best_pts = -1
        self.best_j = 0
        self.best_sol: tuple[_Desc, ...] | None = None
        self.best_key = -1  # ids best_sol lays, -1 until a tie needs them
        self.ids: _Ids | None = None

    def leaf(self, nat: int, mn: int, cap: int, sol: tuple[_Desc, ...]) -> None:
        nj = self.nj
        if mn > nj:
            return
        if self.first:
            raise _Found
        jpen = self.pr.jpen
        used = (cap if cap < nj else nj) if jpen > 0 else mn
        pts = nat + jpen * used
        if pts > self.best_pts or (pts == self.best_pts and used < self.best_j):
            self.best_pts = pts
            self.best_j = used
            self.best_sol = sol
            self.best_key = -1
        elif pts == self.best_pts and used == self.best_j:
            best = self.best_sol
            assert best is not None
            # rule 3 on every id laid: the naturals, then the same lowest
            # jokers on both sides (they still count when one list of
            # naturals is a prefix of the other)
            jokers = self.id_table().joker_prefix[used]
            if self.best_key < 0:
                self.best_key = self.union(best) | jokers
            key = self.union(sol) | jokers
            if key != self.best_key:
                if _lex_less(key, self.best_key):
                    self.best_sol = sol
                    self.best_key = key
            elif _tuple_less(self.split(sol, used), self.split(best, used)):
                self.best_sol = sol

    def id_table(self) -> _Ids:
        ids = self.ids
        if ids is None:
            hid = 0
            jokers: list[int] = []
            by_id: dict[int, Card] = {}
            for c in self.hand:
                i = c.id
                by_id[i] = c
                if c.rank:
                    hid |= 1 << i
                else:
                    jokers.append(i)
            ids = self.ids = _Ids(hid, jokers, self.pr.decks, self.twins, by_id)
        return ids

    def contents(self, sol: tuple[_Desc, ...]) -> list[int]:
        """Natural ids of each meld (contract order), the lowest the hand can give.

        Runs take the lowest copies of their kinds, then each set the lowest ids
        its rank has left: together the smallest ids for these kinds and counts.
        """
        ids = self.id_table()
        out = [0] * self.rd.n
        taken = [0] * ids.decks
        runs = 0
        sets: list[_Desc] = []
        for d in sol:
            if d[0]:
                m = ids.take(_kinds_of(d[3], d[2]), taken)
                out[d[1]] = m
                runs |= m
            else:
                sets.append(d)
        if not sets:
            return out
        free = ids.hid & ~runs
        distinct = self.pr.distinct
        if len({d[2] for d in sets}) == len(sets):
            # one set per rank: each takes its rank's lowest free ids
            for d in sets:
                r = d[2]
                pool = free & _RANK_IDS[r]
                if distinct:
                    firsts = 0  # each suit's lowest free id
                    for s in range(4):
                        x = pool & _KIND_IDS[s * 13 + r - 1]
                        firsts |= x & -x
                    pool = firsts
                out[d[1]] = _low_bits(pool, d[3])
            return out
        while sets:
            d = sets.pop(0)
            r = d[2]
            group = [d]
            rest: list[_Desc] = []
            for e in sets:
                (group if e[2] == r else rest).append(e)
            sets = rest
            pool = free & _RANK_IDS[r]
            if not distinct:
                for e in sorted(group, key=_index):
                    got = _low_bits(pool, e[3])
                    pool ^= got
                    out[e[1]] = got
            elif len(group) == 1:
                firsts = 0  # each suit's lowest free id
                for s in range(4):
                    x = pool & _KIND_IDS[s * 13 + r - 1]
                    firsts |= x & -x
                out[d[1]] = _low_bits(firsts, d[3])
            else:
                group.sort(key=_index)
                parts = _split_distinct(pool, [e[3] for e in group])
                for e, part in zip(group, parts, strict=True):
                    out[e[1]] = part
        return out

    def union(self, sol: tuple[_Desc, ...]) -> int:
        """Rule 3's key: the natural ids the selection lays."""
        key = 0
        for m in self.contents(sol):
            key |= m
        return key

    def split(self, sol: tuple[_Desc, ...], used: int) -> list[int]:
        """Per-slot id masks (naturals and jokers) under the split rule.

        Slots are filled in contract order; where a slot belongs to a group of
        identical requirements, each meld of the group still unplaced is tried
        and the one giving the smallest id list wins (greedy is exact for a
        lexicographic order: a slot's choice never constrains the later slots'
        feasibility, only their ids).  Lower copies of a kind two melds share
        go to the earlier slot; spare jokers go to the last slots.
        """
        ids = self.id_table()
        contents = self.contents(sol)
        rd = self.rd
        n = rd.n
        mins = [0] * n
        room = [0] * n
        for d in sol:
            mins[d[1]] = d[4]
            room[d[1]] = d[5] - d[4]
        extra = used - sum(mins)
        jm = ids.joker_prefix
        if not rd.grouped and not ids.twins:
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
                k = m & _KIND_MASK
                m >>= 52
                while m:
                    k |= m & _KIND_MASK
                    m >>= 52
                if seen & k:
                    twins = True
                    break
                seen |= k
        levels = [_levels(m) for m in contents] if twins else []
        taken = [0] * ids.decks
        placed = [False] * n
        masks: list[int] = []
        for slot in range(n):
            best_mask = -1
            best_m = -1
            best_taken = taken
            best_js = 0
            for m in rd.group[slot]:
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
                if best_m < 0 or _lex_less(mask, best_mask):
                    best_mask, best_m, best_taken, best_js = mask, m, t, js
            placed[best_m] = True
            taken = best_taken
            extra -= best_js - mins[best_m]
            room_left -= room[best_m]
            jat += best_js
            masks.append(best_mask)
        return masks


def _index(d: _Desc) -> int:
    return d[1]


def _split_distinct(pool: int, sizes: list[int]) -> list[int]:
    """Same-rank sets of distinct suits: the smallest ids overall, then each set in turn.

    Rare (two groups of one rank), so plain enumeration over the few ids.
    """
    ids = []
    x = pool
    while x:
        low = x & -x
        ids.append(low.bit_length() - 1)
        x ^= low
    # combinations of a sorted list come out in lexicographic order
    for union in combinations(ids, sum(sizes)):
        parts = _split_rest(list(union), sizes)
        if parts is not None:
            return parts
    raise AssertionError("sets that fitted in count space found no cards")


def _split_rest(ids: list[int], sizes: list[int]) -> list[int] | None:
    if not sizes:
        return []
    for part in combinations(ids, sizes[0]):
        if len({(i % 52) // 13 for i in part}) != len(part):
            continue
        rest = [i for i in ids if i not in part]
        tail = _split_rest(rest, sizes[1:])
        if tail is not None:
            m = 0
            for i in part:
                m |= 1 << i
            return [m, *tail]
    return None


def _parse(hand: Sequence[Card]) -> tuple[int, int, int, int, int, list[int], list[int]]:
    """Planes, joker count, and per rank: naturals, and distinct suits."""
    h1 = h2 = h3 = h4 = 0
    nj = 0
    rc = [0] * 14
    rd = [0] * 14
    for c in hand:
        r = c.rank
        if r == 0:
            nj += 1
            continue
        rc[r] += 1
        b = 1 << (c.suit * 13 + r - 1)
        if not h1 & b:
            h1 |= b
            rd[r] += 1
        elif not h2 & b:
            h2 |= b
        elif not h3 & b:
            h3 |= b
        elif not h4 & b:
            h4 |= b
        else:
            raise InvalidActionError(f"more than four copies of {c.code} in a hand")
    return h1, h2, h3, h4, nj, rc, rd


# Candidates of the best-selection search, best first: (score bound, naturals'
# points, least jokers, most jokers, kinds, suit, skeleton) for a run, and
# (score bound, naturals' points, least jokers, most jokers, rank, naturals) for a set.
_RunCand = tuple[int, int, int, int, int, int, int]
_SetCand = tuple[int, int, int, int, int, int]


class _BestSearch:
    """The branch and bound of _search_best: runs first (skeletons), then sets (counts).

    The recursions are methods with plain int arguments, not closures: that is
    what the compiled solver (setup.py) calls without boxing a value.
    """

    __slots__ = (
        "counts",
        "cur",
        "distinct",
        "exact",
        "jeff",
        "jpen",
        "left",
        "maxj",
        "minnat",
        "nj",
        "nruns",
        "nsets",
        "p1",
        "p2",
        "p3",
        "p4",
        "pen",
        "ranks",
        "rest_cap",
        "rest_nat",
        "run_cands",
        "run_idx",
        "run_len",
        "set_idx",
        "set_memo",
        "set_size",
        "smax",
        "st",
        "suit_counts",
        "used",
    )

    def __init__(
        self,
        st: _Best,
        jeff: int,
        ranks: list[int],
        counts: list[int],
        run_cands: dict[int, list[_RunCand]],
        rest_nat: list[int],
        rest_cap: list[int],
    ) -> None:
        pr = st.pr
        rd = st.rd
        self.st = st
        self.nj = st.nj
        self.exact = pr.exact
        self.maxj = pr.maxj
        self.minnat = pr.minnat
        self.jpen = pr.jpen
        self.pen = pr.pen
        self.smax = pr.smax
        self.distinct = pr.distinct
        self.jeff = jeff  # jokers one meld can take
        self.run_len = rd.run_len
        self.run_idx = rd.run_idx
        self.nruns = len(rd.run_len)
        self.run_cands = run_cands  # per run length: every skeleton of the full hand
        self.set_size = rd.set_size
        self.set_idx = rd.set_idx
        self.nsets = len(rd.set_size)
        self.ranks = ranks  # ranks that can hold a set
        self.counts = counts  # naturals per rank a set may take (distinct suits or not)
        # bounds of what the requirements from index i on could lay at most
        # (runs, then sets)
        self.rest_nat = rest_nat
        self.rest_cap = rest_cap
        # (the set search's state; used only by contracts with sets)
        self.set_memo: dict[tuple[int, ...], dict[int, list[_SetCand]]] = {}
        # the set search's per-leaf state, shared by rec_sets (reset by sets_phase)
        self.cur: dict[int, list[_SetCand]] = {}
        self.left = [0] * 14  # naturals a rank still offers (sets of any suits)
        self.used: dict[int, list[int]] = {}  # set sizes per rank (distinct suits)
        # the planes the runs left
        self.p1 = 0
        self.p2 = 0
        self.p3 = 0
        self.p4 = 0
        self.suit_counts: dict[int, list[int]] = {}  # per rank, for what the runs left

    def set_cands(self, avail: dict[int, int]) -> dict[int, list[_SetCand]]:
        # runs only ever shrink ranks' counts, so the counts of `ranks` name the state
        key = tuple([avail.get(r, 0) for r in self.ranks])
        set_memo = self.set_memo
        got = set_memo.get(key)
        if got is not None:
            return got
        exact = self.exact
        jeff = self.jeff
        minnat = self.minnat
        smax = self.smax
        maxj = self.maxj
        jpen = self.jpen
        nj = self.nj
        pen = self.pen
        cands: dict[int, list[_SetCand]] = {}
        for s in self.set_size:
            if s in cands:
                continue
            lst: list[_SetCand] = []
            lo = s - jeff
            if lo < minnat:
                lo = minnat
            for r, a in avail.items():
                hi = (s if a > s else a) if exact else (smax if a > smax else a)
                p = pen[r]
                for n in range(hi, lo - 1, -1):
                    if exact:
                        j = s - n
                        lst.append((p * n + jpen * j, p * n, j, j, r, n))
                    else:
                        j = s - n if n < s else 0
                        c = smax - n
                        if c > maxj:
                            c = maxj
                        lst.append((p * n + jpen * (c if c < nj else nj), p * n, j, c, r, n))
            lst.sort(key=_FIRST, reverse=True)
            cands[s] = lst
        set_memo[key] = cands
        return cands

    def rec_sets(
        self, i: int, start: int, nat: int, mn: int, cap: int, sol: tuple[_Desc, ...]
    ) -> None:
        st = self.st
        if i == self.nsets:
            st.leaf(nat, mn, cap, sol)
            return
        set_size = self.set_size
        s = set_size[i]
        lst = self.cur[s]
        if i == 0 or set_size[i - 1] != s:
            start = 0
        nj = self.nj
        jpen = self.jpen
        k = self.nruns + i + 1
        base = nat + self.rest_nat[k]
        cap_rest = cap + self.rest_cap[k]
        loose = base + jpen * (cap_rest if cap_rest < nj else nj)
        ix = self.set_idx[i]
        distinct = self.distinct
        left = self.left
        used = self.used
        for idx in range(start, len(lst)):
            sc, cn, cmn, ccap, r, n = lst[idx]
            if loose + sc < st.best_pts:
                break
            tot = cap_rest + ccap
            if base + cn + jpen * (tot if tot < nj else nj) < st.best_pts:
                continue
            if mn + cmn > nj:
                continue
            d: _Desc = (False, ix, r, n, cmn, ccap)
            if distinct:
                prev = used.get(r)
                if prev is None:
                    prev = used[r] = []
                elif prev:
                    suit_counts = self.suit_counts
                    sc_r = suit_counts.get(r)
                    if sc_r is None:
                        sc_r = suit_counts[r] = _suit_counts(r, self.p1, self.p2, self.p3, self.p4)
                    if not _sets_fit([*prev, n], sc_r):
                        continue
                prev.append(n)
                self.rec_sets(i + 1, idx, nat + cn, mn + cmn, cap + ccap, (*sol, d))
                prev.pop()
            else:
                if left[r] < n:
                    continue
                left[r] -= n
                self.rec_sets(i + 1, idx, nat + cn, mn + cmn, cap + ccap, (*sol, d))
                left[r] += n

    def sets_phase(
        self,
        g1: int,
        g2: int,
        g3: int,
        g4: int,
        nat: int,
        mn: int,
        cap: int,
        sol: tuple[_Desc, ...],
    ) -> None:
        avail: dict[int, int] = {}
        if self.nruns:
            distinct = self.distinct
            minnat = self.minnat
            for r in self.ranks:
                a = _rank_count(r, g1, g2, g3, g4, distinct)
                if a >= minnat:
                    avail[r] = a
            if not avail:
                return
        else:
            counts = self.counts
            for r in self.ranks:
                avail[r] = counts[r]
        self.cur = self.set_cands(avail)
        left = self.left
        for r, a in avail.items():
            left[r] = a
        self.p1 = g1
        self.p2 = g2
        self.p3 = g3
        self.p4 = g4
        self.suit_counts.clear()
        self.rec_sets(0, 0, nat, mn, cap, sol)

    def rec_runs(
        self,
        i: int,
        start: int,
        g1: int,
        g2: int,
        g3: int,
        g4: int,
        nat: int,
        mn: int,
        cap: int,
        sol: tuple[_Desc, ...],
    ) -> None:
        st = self.st
        if i == self.nruns:
            if self.nsets:
                self.sets_phase(g1, g2, g3, g4, nat, mn, cap, sol)
            else:
                st.leaf(nat, mn, cap, sol)
            return
        run_len = self.run_len
        length = run_len[i]
        lst = self.run_cands[length]
        if i == 0 or run_len[i - 1] != length:
            start = 0
        nj = self.nj
        jpen = self.jpen
        base = nat + self.rest_nat[i + 1]
        cap_rest = cap + self.rest_cap[i + 1]
        loose = base + jpen * (cap_rest if cap_rest < nj else nj)
        ix = self.run_idx[i]
        for idx in range(start, len(lst)):
            sc, cn, cmn, ccap, v, s, r_mask = lst[idx]
            if loose + sc < st.best_pts:
                break
            if v & g1 != v:
                continue
            tot = cap_rest + ccap
            if base + cn + jpen * (tot if tot < nj else nj) < st.best_pts:
                continue
            if mn + cmn > nj:
                continue
            nv = ~v
            d: _Desc = (True, ix, s, r_mask, cmn, ccap)
            self.rec_runs(
                i + 1,
                idx,
                (g1 & nv) | (g2 & v),
                (g2 & nv) | (g3 & v),
                (g3 & nv) | (g4 & v),
                g4 & nv,
                nat + cn,
                mn + cmn,
                cap + ccap,
                (*sol, d),
            )


def _search_best(
    st: _Best, h1: int, h2: int, h3: int, h4: int, rc: list[int], rcd: list[int]
) -> None:
    """Fill st.best_* with the best selection, if there is one."""
    pr = st.pr
    rd = st.rd
    nj = st.nj
    exact = pr.exact
    maxj = pr.maxj
    minnat = pr.minnat
    jpen = pr.jpen
    pen = pr.pen
    smax = pr.smax
    distinct = pr.distinct
    jeff = nj if nj < maxj else maxj  # jokers one meld can take

    # ---- sets: ranks that can hold one, and what sets could lay at most
    set_size = rd.set_size
    nsets = len(set_size)
    counts = rcd if distinct else rc
    ranks: list[int] = []
    set_ub_nat: list[int] = []
    set_ub_cap: list[int] = []
    if nsets:
        ranks = [r for r in range(1, 14) if counts[r] >= minnat]
        # a set needs `need` naturals of one rank, so a rank holds at most
        # count // need disjoint sets (rc counts every copy, for sets of
        # distinct suits too: each set takes at most one copy of a kind)
        need = min(set_size) - jeff
        if need < minnat:
            need = minnat
        hosts = 0
        for r in ranks:
            hosts += rc[r] // need
        if hosts < nsets:
            return
        prev_s = 0
        ub = c = 0
        for s in set_size:
            if s != prev_s:  # contracts repeat sizes: bound each size once
                prev_s = s
                need = s - jeff
                if need < minnat:
                    need = minnat
                top_n = s if exact else smax
                ub = -1
                for r in ranks:
                    a = counts[r]
                    if a >= need:
                        v = pen[r] * (a if a < top_n else top_n)
                        if v > ub:
                            ub = v
                if ub < 0:
                    return
                c = (s if exact else smax) - minnat
                c = min(c, jeff if exact else maxj)
            set_ub_nat.append(ub)
            set_ub_cap.append(c)

    # ---- runs: every skeleton of the full hand, best first
    run_len = rd.run_len
    nruns = len(run_len)
    run_cands: dict[int, list[tuple[int, int, int, int, int, int, int]]] = {}
    run_ub_nat: list[int] = []
    run_ub_cap: list[int] = []
    if nruns:
        pts = pr.pts
        ace_high = pr.top == 14
        ps = (
            _positions(h1, 0, ace_high),
            _positions(h1, 1, ace_high),
            _positions(h1, 2, ace_high),
            _positions(h1, 3, ace_high),
        )
        spare = -1
        if not exact:
            # Without exact sizes a natural a run could take but leaves in hand
            # is worth its points more, for one joker less, so a skeleton that
            # skips one is beaten by the one that takes it; unless that natural
            # can serve another meld, or the hand holds more jokers than a run
            # could take (then a joker in that place is worth more).
            most = 0
            for s in range(4):
                most = max(most, _popcount((h1 >> (13 * s)) & _SUIT13))
            if nj < min(maxj, 13 - most) and nruns == 1:
                spare = 0
                if nsets:
                    for r in range(1, 14):
                        if counts[r] >= minnat:
                            spare |= 1 << r
                    if spare & 2:
                        spare |= 1 << 14
        ubs: dict[int, tuple[int, int]] = {}
        for length in run_len:
            if length not in ubs:
                lst = []
                need = length - jeff
                if need < minnat:
                    need = minnat
                top_nat = top_cap = 0
                for s, p in enumerate(ps):
                    if _popcount(p) >= need:
                        shift = 13 * s
                        for r_mask, nn, ln in _run_skeletons(pr, p, length, jeff, spare):
                            mn = ln - nn
                            if exact:
                                cap = mn
                            else:
                                cap = 13 - nn
                                if cap > maxj:
                                    cap = maxj
                            nat = pts[r_mask]
                            if nat > top_nat:
                                top_nat = nat
                            if cap > top_cap:
                                top_cap = cap
                            kinds = (((r_mask >> 1) | (r_mask >> 14)) & _SUIT13) << shift
                            lst.append(
                                (
                                    nat + jpen * (cap if cap < nj else nj),
                                    nat,
                                    mn,
                                    cap,
                                    kinds,
                                    s,
                                    r_mask,
                                )
                            )
                if not lst:
                    return
                lst.sort(key=_FIRST, reverse=True)
                run_cands[length] = lst
                ubs[length] = (top_nat, top_cap)
            top_nat, top_cap = ubs[length]
            run_ub_nat.append(top_nat)
            run_ub_cap.append(top_cap)

    if nruns == 1 and not nsets:
        # one run: the candidates come best first, each one is a whole selection
        ix = rd.run_idx[0]
        for sc, cn, cmn, ccap, _, s, r_mask in run_cands[run_len[0]]:
            if sc < st.best_pts:
                break
            if cmn <= nj:
                st.leaf(cn, cmn, ccap, ((True, ix, s, r_mask, cmn, ccap),))
        return
    ub_nat = run_ub_nat + set_ub_nat
    ub_cap = run_ub_cap + set_ub_cap
    nreq = nruns + nsets
    rest_nat = [0] * (nreq + 1)
    rest_cap = [0] * (nreq + 1)
    for i in range(nreq - 1, -1, -1):
        rest_nat[i] = rest_nat[i + 1] + ub_nat[i]
        rest_cap[i] = rest_cap[i + 1] + ub_cap[i]
    search = _BestSearch(st, jeff, ranks, counts, run_cands, rest_nat, rest_cap)
    if nruns:
        search.rec_runs(0, 0, h1, h2, h3, h4, 0, 0, 0, ())
    else:
        search.sets_phase(h1, h2, h3, h4, 0, 0, 0, ())


# candidates sort by their score, the first field (a C key function: no Python call
# per element)
_FIRST: Final = itemgetter(0)


def _run_meld(cards: list[Card], top: int) -> Meld:
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
    nj = length - nat
    # lowest start with the ace low: the jokers not needed for gaps go below
    lo = (ranks & -ranks).bit_length() - 1
    spare = nj - (ranks.bit_length() - lo - nat)
    start = 99
    if spare >= 0:
        start = lo - spare if lo > spare else 1
        if start + length - 1 > top:
            start = 99
    if top == 14 and ranks & 2:
        # or with the ace standing above the king
        high = (ranks ^ 2) | 1 << 14
        lo2 = (high & -high).bit_length() - 1
        spare = nj - (15 - lo2 - nat)
        if spare >= 0:
            st = lo2 - spare if lo2 > spare else 1
            if st + length - 1 <= top and st < start:
                start = st
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
    return _new_meld(MeldKind.RUN, tuple(out), start, cards[0].suit)


def _selection(st: _Best) -> Selection:
    sol = st.best_sol
    assert sol is not None
    used = st.best_j
    masks = st.split(sol, used)
    by_id = st.id_table().by_id
    melds: list[Meld] = []
    top = st.pr.top
    is_run = st.rd.is_run
    for slot, m in enumerate(masks):
        cards: list[Card] = []
        # the id mask a deck (52 ids) at a time: each part is a machine word
        base = 0
        while m:
            part = m & _KIND_MASK
            m >>= 52
            while part:
                low = part & -part
                cards.append(by_id[base + low.bit_length() - 1])
                part ^= low
            base += 52
        # ids ascending: naturals first, then jokers, each in card order
        if is_run[slot]:
            melds.append(_run_meld(cards, top))
        else:
            melds.append(_new_meld(MeldKind.SET, tuple(cards), cards[0].rank, NO_SUIT))
    return Selection(tuple(melds), st.best_pts, used)


def _best(
    hand: Sequence[Card], pr: _Prep, rd: _Round
) -> tuple[Selection | None, tuple[int, int, int, int], int]:
    """The best selection (or None), and the hand's planes and jokers for what follows."""
    h1, h2, h3, h4, nj, rc, rcd = _parse(hand)
    st = _Best(pr, rd, hand, nj, h2 != 0)
    _search_best(st, h1, h2, h3, h4, rc, rcd)
    best = None if st.best_sol is None else _selection(st)
    return best, (h1, h2, h3, h4), nj


def best_selection(hand: Sequence[Card], rules: RuleSet, round_number: int) -> Selection | None:
    """The selection the engine lays for this hand, or None if the contract is out of reach."""
    pr = _prep(rules)
    return _best(hand, pr, _round(pr, round_number))[0]


# --------------------------------------------------------------------------- missing cards
# The search for the fewest cards that would make the contract layable works on
# a relaxation: every card still to come is a "wildcard" that stands for the
# natural its place in a meld needs (a natural, so it counts towards a meld's
# naturals and not towards its joker limit).  With the hand's jokers spread
# over the open places afterwards, a leaf's cost is
#     open places - min(jokers in hand, places a joker may take).
# The relaxation never costs more than the truth; a leaf is accepted at that
# cost once the rest of the deck is shown to hold the cards its wildcards stand
# for (or jokers that may take their places), else it is costed exactly.


# A meld of a cost leaf: run (True, suit or -1 for "any", skeleton, length) or
# set (False, rank or 0 for "any rank the hand has none of", size).
_CMeld = tuple[bool, int, int, int]
# the set melds, by rank * 32 + size (sizes below 32; larger ones are made)
_SET_MELDS: Final = tuple((False, r, size, 0) for r in range(14) for size in range(32))


def _set_meld(r: int, size: int) -> _CMeld:
    return _SET_MELDS[r * 32 + size] if size < 32 else (False, r, size, 0)


class _Skel:
    """A run skeleton of the cost search, made once per (length, suit, positions left).

    A class rather than a tuple: compiled (setup.py), its fields are read
    unboxed, and the search reads them at every node.
    """

    __slots__ = ("jc", "kinds", "lb", "ln", "lo", "meld", "opn", "r_mask", "span_kinds", "suit")

    def __init__(
        self, lb: int, opn: int, jc: int, r_mask: int, ln: int, suit: int, lo: int
    ) -> None:
        self.lb = lb  # lower bound of its cost alone
        self.opn = opn  # open places
        self.jc = jc  # places a joker may take
        self.r_mask = r_mask  # positions (bits 1..14); 0 for an all-wildcard run
        self.ln = ln  # length
        self.suit = suit  # -1: any suit (all wildcards)
        self.lo = lo  # lowest position
        self.kinds = _kinds_of(r_mask, suit) if suit >= 0 else 0
        span = (1 << r_mask.bit_length()) - (1 << lo) if r_mask else 0
        self.span_kinds = _kinds_of(span, suit) if suit >= 0 else 0
        self.meld: _CMeld = (True, suit, r_mask, ln)  # as a leaf lists it


_NO_SKELETONS: Final[list[_Skel]] = []  # shared, never changed


class _Level:
    """The skeletons a run of one length may take on what is left, and the fewest
    open places among them (what that run adds to a lower bound at least)."""

    __slots__ = ("min_open", "skels")

    def __init__(self, skels: list[_Skel], min_open: int) -> None:
        self.skels = skels
        self.min_open = min_open


def _cost_skeletons(
    p: int, length: int, pr: _Prep, nj: int, limit: int, omit: bool, prune: bool
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
    exact = pr.exact
    minnat = pr.minnat
    maxj = pr.maxj
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
            ln = length if exact or span <= length else span
            cap = ln - minnat
            if cap < 0:
                continue
            if cap > maxj:
                cap = maxj
            nn = k - i + 1
            opn = ln - nn
            jc = cap if cap < opn else opn
            lb = opn - (jc if jc < nj else nj)
            if lb > limit:
                continue
            if prune and ln > length:
                # the best window of the minimum length inside the span
                win = (1 << length) - 1
                most = 0
                for a in range(lo, hi - length + 2):
                    c = _popcount(acc >> a & win)
                    if c > most:
                        most = c
                o2 = length - most
                c2 = min(maxj, length - minnat)
                if c2 >= 0 and o2 <= opn and o2 - min(c2, o2) <= opn - jc:
                    continue
            out.append((lb, opn, jc, acc, ln))
            # each useful omission moves one more joker into place, so there
            # are never more than the hand has jokers
            room = cap - opn
            if room > nj:
                room = nj
            if omit and room > 0 and k - i >= 2:
                inner = bits[i + 1 : k]
                for drop in range(1, min(room, len(inner)) + 1):
                    o2 = opn + drop
                    j2 = cap if cap < o2 else o2
                    lb2 = o2 - (j2 if j2 < nj else nj)
                    if lb2 > limit:
                        break
                    for gone in combinations(inner, drop):
                        m = acc
                        for g in gone:
                            m ^= 1 << g
                        out.append((lb2, o2, j2, m, ln))
    return out


class _Cost:
    """Branch and bound for the fewest missing cards (see the section comment)."""

    __slots__ = (
        "best",
        "cands",
        "collect",
        "first",
        "h",
        "level_memo",
        "limit",
        "nj",
        "nruns",
        "omit",
        "pr",
        "rd",
        "rest",
        "rest_j",
        "rest_jc",
        "rest_open",
        "rest_planes",
        "set_avail",
        "set_groups",
        "set_left",
        "set_order",
        "set_planes",
        "set_top",
        "stack",
        "sure",
    )

    def __init__(
        self,
        pr: _Prep,
        rd: _Round,
        h: tuple[int, int, int, int],
        nj: int,
        limit: int,
        collect: bool,
        first: bool,
    ) -> None:
        self.pr = pr
        self.rd = rd
        self.h = h  # the hand's planes (the rest of the deck is what they lack)
        self.nj = nj
        self.rest_j = pr.deck_jokers - nj
        # kinds the rest of the deck still holds a copy of (the hand has fewer than
        # one per deck): plane ``decks`` is the kinds held once per deck
        self.rest = _ALL52 & ~h[pr.decks - 1] if 1 <= pr.decks <= 4 else _ALL52
        # rest_planes[L - 1]: the kinds of which the rest holds L copies or more
        # (held at most decks - L times)
        held = (_ALL52, h[0], h[1], h[2], h[3])
        planes = [0, 0, 0, 0]
        for level in range(1, 5):
            at = pr.decks - level + 1  # held this many times or more: fewer than L left
            if at >= 5:
                planes[level - 1] = _ALL52
            elif at >= 1:
                planes[level - 1] = _ALL52 & ~held[at]
        self.rest_planes = (planes[0], planes[1], planes[2], planes[3])
        self.limit = limit
        self.collect = collect  # gather the kinds the best leaves leave open
        self.first = first  # stop at the first leaf within the limit
        self.best = limit + 1
        # kinds as bits of ``_out_bit`` (rank * 4 + suit, the joker 0: bit order is
        # (rank, suit) order), so gathering allocates nothing
        self.cands = 0
        self.sure = 0
        # skeletons per (length, positions left): a skeleton takes all the
        # naturals still left in its span, so later runs look at what is left
        self.level_memo: dict[int, _Level] = {}  # by g1 << 4 | length
        self.nruns = len(rd.run_len)
        self.omit = bool(rd.set_size) or self.nruns > 1
        # bounds of what the requirements still to place need at least
        self.rest_open: list[int] = []
        self.rest_jc: list[int] = []
        # the sets phase's working state (one sets phase at a time)
        self.set_planes = (0, 0, 0, 0)
        self.set_avail = [0] * 14
        self.set_left = [0] * 14
        self.set_order: list[int] = []
        self.set_groups = [0] * 14  # sets placed per rank
        self.set_top = 0
        # the melds placed so far, by place: runs, then sets (a leaf reads them all)
        self.stack: list[_CMeld] = [_set_meld(0, 0)] * (self.nruns + len(rd.set_size))

    # ---------------------------------------------------------------- search
    # The recursions are methods with plain int arguments, not closures: that is
    # what the compiled solver (setup.py) calls without boxing a value.
    def suit_skels(self, length: int, s: int, p: int) -> list[_Skel]:
        # No leaf costs less than any of its skeletons' bounds, and the best cost
        # only falls: a skeleton over the best so far is never needed, now or
        # when this list is looked up again later.
        bound = self.best if self.best < self.limit else self.limit
        nj = self.nj
        prune = not self.collect
        if length >= 16 or nj >= 32 or bound >= 32:  # past what the key packs
            return self.make_skels(length, s, p, bound, prune)
        # the list is a function of the rule set and these small numbers alone,
        # so it is kept with the rule set's tables (packed into one int key)
        key = (
            ((((p << 2 | s) << 4 | length) << 5 | nj) << 5 | bound) << 1 | self.omit
        ) << 1 | prune
        table = self.pr.skeletons
        got = table.get(key)
        if got is None:
            if len(table) >= _SKELETONS_KEPT:
                table.clear()
            got = table[key] = self.make_skels(length, s, p, bound, prune)
        return got

    def make_skels(self, length: int, s: int, p: int, bound: int, prune: bool) -> list[_Skel]:
        """One suit's skeletons, by bound (stable: ties in the order they were made)."""
        made = _cost_skeletons(p, length, self.pr, self.nj, bound, self.omit, prune)
        made.sort(key=_FIRST)  # Python's sort is stable
        return [
            _Skel(lb, opn, jc, r_mask, ln, s, (r_mask & -r_mask).bit_length() - 1)
            for lb, opn, jc, r_mask, ln in made
        ]

    def level(self, length: int, g1: int) -> _Level:
        """Every skeleton of a run of this length on what is left, cheapest bound
        first (each suit's list comes sorted by bound: merged, ties keep their
        suit order)."""
        key = g1 << 4 | length
        got = self.level_memo.get(key)
        if got is not None:
            return got
        pr = self.pr
        ace_high = pr.top == 14
        limit = self.limit
        # (a suit with nothing left has no skeleton: no table look-up for it)
        p = _positions(g1, 0, ace_high)
        s0 = self.suit_skels(length, 0, p) if p else _NO_SKELETONS
        p = _positions(g1, 1, ace_high)
        s1 = self.suit_skels(length, 1, p) if p else _NO_SKELETONS
        p = _positions(g1, 2, ace_high)
        s2 = self.suit_skels(length, 2, p) if p else _NO_SKELETONS
        p = _positions(g1, 3, ace_high)
        s3 = self.suit_skels(length, 3, p) if p else _NO_SKELETONS
        wild: _Skel | None = None
        cap = length - pr.minnat
        if cap >= 0:
            if cap > pr.maxj:
                cap = pr.maxj
            jc = min(cap, length)
            lb = length - min(jc, self.nj)
            if lb <= limit and lb <= self.best:
                wild = _Skel(lb, length, jc, 0, length, -1, 0)
        lst: list[_Skel] = []
        most_open = _NOLIMIT if wild is None else length
        i0 = i1 = i2 = i3 = 0
        n0, n1, n2, n3 = len(s0), len(s1), len(s2), len(s3)
        for lb in range(limit + 1):
            while i0 < n0 and s0[i0].lb == lb:
                lst.append(s0[i0])
                i0 += 1
            while i1 < n1 and s1[i1].lb == lb:
                lst.append(s1[i1])
                i1 += 1
            while i2 < n2 and s2[i2].lb == lb:
                lst.append(s2[i2])
                i2 += 1
            while i3 < n3 and s3[i3].lb == lb:
                lst.append(s3[i3])
                i3 += 1
            if wild is not None and wild.lb == lb:
                lst.append(wild)
        for c in lst:
            if c.opn < most_open:
                most_open = c.opn
        got = self.level_memo[key] = _Level(lst, most_open)
        return got

    def run(self) -> None:
        """Search runs (skeletons of what is left), then sets (count space)."""
        pr = self.pr
        rd = self.rd
        h1, h2, h3, h4 = self.h
        maxj = pr.maxj
        minnat = pr.minnat
        run_len = rd.run_len
        set_size = rd.set_size
        nruns = self.nruns
        nsets = len(set_size)
        for length in run_len:
            if not self.level(length, h1).skels:
                return
        rest_open = [0] * (nruns + nsets + 1)
        rest_jc = [0] * (nruns + nsets + 1)
        most = 0
        if nsets:
            for r in range(1, 14):
                most = max(most, _rank_count(r, h1, h2, h3, h4, pr.distinct))
        mins: list[tuple[int, int]] = []
        for length in run_len:
            first = self.level(length, h1)
            most_jc = 0
            for c in first.skels:
                if c.jc > most_jc:
                    most_jc = c.jc
            mins.append((first.min_open, most_jc))
        for size in set_size:
            cap = min(maxj, size - minnat)
            if cap < 0:
                return
            mins.append((size - min(size, most), min(cap, size)))
        for i in range(nruns + nsets - 1, -1, -1):
            rest_open[i] = rest_open[i + 1] + mins[i][0]
            rest_jc[i] = rest_jc[i + 1] + mins[i][1]
        self.rest_open = rest_open
        self.rest_jc = rest_jc
        self.rec_runs(0, None, h1, h2, h3, h4, 0, 0)

    def rec_runs(
        self,
        i: int,
        prev: _Skel | None,
        g1: int,
        g2: int,
        g3: int,
        g4: int,
        opn: int,
        jc: int,
    ) -> bool:
        """Place run i and the ones after it; True stops the search."""
        nruns = self.nruns
        if i == nruns:
            return self.sets_phase(g1, g2, g3, g4, opn, jc)
        run_len = self.rd.run_len
        length = run_len[i]
        # Later runs see only what the earlier ones left (lists hold only
        # skeletons that fit).  Two identical runs whose spans do not meet
        # see the same either way, so only their order by (suit, lowest
        # position) is searched; runs that overlap are tried both ways.
        here = self.level(length, g1)
        lst = here.skels
        if i and run_len[i - 1] != length:
            prev = None
        # what the runs still to come need at least, on what is left now
        ro = self.rest_open[nruns]
        for j in range(i + 1, nruns):
            later = run_len[j]
            ro += here.min_open if later == length else self.level(later, g1).min_open
        rj = self.rest_jc[i + 1]
        nj = self.nj
        collect = self.collect
        stack = self.stack
        for c in lst:
            co = c.opn
            cj = c.jc
            if prev is not None and not c.span_kinds & prev.span_kinds:
                s = c.suit
                if s < prev.suit or (s == prev.suit and c.lo < prev.lo):
                    continue
            tj = jc + cj + rj
            lb = opn + co + ro - (tj if tj < nj else nj)
            best = self.best
            if lb > best or (lb == best and not collect):
                continue
            v = c.kinds
            nv = ~v
            stack[i] = c.meld
            if self.rec_runs(
                i + 1,
                c,
                (g1 & nv) | (g2 & v),
                (g2 & nv) | (g3 & v),
                (g3 & nv) | (g4 & v),
                g4 & nv,
                opn + co,
                jc + cj,
            ):
                return True
        return False

    def sets_phase(
        self,
        g1: int,
        g2: int,
        g3: int,
        g4: int,
        opn: int,
        jc: int,
    ) -> bool:
        """Choose ranks for the sets on what the runs left; True stops the search."""
        if not self.rd.set_size:
            return self.leaf(self.stack, (g1, g2, g3, g4), opn, jc)
        distinct = self.pr.distinct
        avail = self.set_avail
        left = self.set_left
        groups = self.set_groups
        most = 0
        none_left = False
        for r in range(1, 14):
            a = _rank_count(r, g1, g2, g3, g4, distinct)
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
        self.set_planes = (g1, g2, g3, g4)
        self.set_order = order
        self.set_top = avail[order[0]] if order else 0
        return self.rec_sets(0, 0, opn, jc)

    def rec_sets(self, i: int, start: int, opn: int, jc: int) -> bool:
        """Place set i and the ones after it; True stops the search."""
        set_size = self.rd.set_size
        nsets = len(set_size)
        if i == nsets:
            return self.leaf(self.stack, self.set_planes, opn, jc)
        pr = self.pr
        nj = self.nj
        collect = self.collect
        avail = self.set_avail
        left = self.set_left
        order = self.set_order
        groups = self.set_groups
        top_avail = self.set_top
        s = set_size[i]
        if i == 0 or set_size[i - 1] != s:
            start = 0
        cap = min(pr.maxj, s - pr.minnat)
        rj = self.rest_jc[self.nruns + i + 1]
        for idx in range(start, len(order)):
            r = order[idx]
            if r == 0:
                co = s
                cj = cap if cap < s else s
            elif groups[r]:
                # a second set of the rank: bound now, cost exactly at the leaf
                co = s - min(s, avail[r])
                cj = cap if cap < s else s
            else:
                placed = s if left[r] > s else left[r]
                co = s - placed
                cj = cap if cap < co else co
            # the sets still to place: identical ones come later in `order`
            # (no more naturals than this rank), the others at best the top
            a = avail[r] if r else 0
            ro = 0
            chained = True
            for j in range(i + 1, nsets):
                sj = set_size[j]
                chained = chained and sj == set_size[j - 1]
                b = a if chained else top_avail
                ro += sj - (sj if b > sj else b)
            tj = jc + cj + rj
            lb = opn + co + ro - (tj if tj < nj else nj)
            best = self.best
            if lb > best or (lb == best and not collect):
                continue
            taken = 0
            if r:
                groups[r] += 1
                taken = s if left[r] > s else left[r]
                left[r] -= taken
            self.stack[self.nruns + i] = _set_meld(r, s)
            stop = self.rec_sets(i + 1, idx, opn + co, jc + cj)
            if r:
                groups[r] -= 1
                left[r] += taken
            if stop:
                return True
        return False

    # ---------------------------------------------------------------- leaves
    def leaf(self, melds: list[_CMeld], left: tuple[int, int, int, int], opn: int, jc: int) -> bool:
        """Cost a complete leaf; True stops the search (first mode)."""
        nj = self.nj
        seen = shared = 0  # ranks holding a set, and ranks holding several
        for m in melds:
            if not m[0] and m[1]:
                bit = 1 << m[1]
                shared |= seen & bit
                seen |= bit
        if shared:
            opn, jc = self.regroup(melds, left)
            if opn < 0:
                return False
        cost = opn - (jc if jc < nj else nj)
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
            self.gather(melds, left, opn, jc, proven, shared)
        return self.first

    def regroup(self, melds: list[_CMeld], left: tuple[int, int, int, int]) -> tuple[int, int]:
        """Open places and joker room of a leaf where some rank holds several sets,
        for the split of each rank's naturals that makes the leaf cheapest."""
        l1, l2, l3, l4 = left
        pr = self.pr
        maxj = pr.maxj
        minnat = pr.minnat
        nj = self.nj
        opn = jc = 0
        set_ranks = 0
        for m in melds:
            if m[0]:
                r_mask, ln = m[2], m[3]
                o = ln - _popcount(r_mask)
                opn += o
                jc += min(min(maxj, ln - minnat), o)  # (two-argument min is native)
            elif m[1] == 0:
                size = m[2]
                opn += size
                jc += min(min(maxj, size - minnat), size)
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
            opts = self.group_options(sizes, _suit_count_key(r, l1, l2, l3, l4))
            if not opts:
                return -1, 0
            if len(opts) == 1:
                opn += opts[0][0]
                jc += opts[0][1]
            else:
                choices.append(opts)
        if not choices:
            return opn, jc
        best: tuple[int, int, int] | None = None
        for pick in product(*choices):
            o = opn
            c = jc
            for x in pick:
                o += x[0]
                c += x[1]
            cost = o - (c if c < nj else nj)
            if best is None or (cost, -c) < (best[0], -best[2]):
                best = (cost, o, c)
        assert best is not None
        return best[1], best[2]

    def group_options(self, sizes: list[int], count_key: int) -> list[tuple[int, int]]:
        """(open places, joker room) of every split of a rank's naturals over its sets
        (the rank's copies per suit packed in ``count_key``: _suit_count_key)."""
        # a function of the rule set and the counts alone: kept with the rule
        # set's tables (a few hundred entries at most), not recomputed per hand
        pr = self.pr
        cacheable = len(sizes) < 8 and max(sizes) < 32
        key = count_key
        if cacheable:
            for size in sizes:
                key = key << 5 | size
            key = key << 3 | len(sizes)
            got = pr.group_options.get(key)
            if got is not None:
                return got
        counts = [(count_key >> (3 * s)) & 7 for s in range(4)]
        maxj = pr.maxj
        minnat = pr.minnat
        distinct = pr.distinct
        total = sum(counts)
        dsuits = sum(1 for c in counts if c)
        opts: set[tuple[int, int]] = set()
        for ns in product(*[range(min(s, dsuits if distinct else total) + 1) for s in sizes]):
            if distinct:
                if not _sets_fit(list(ns), counts):
                    continue
            elif sum(ns) > total:
                continue
            o = sum(sizes) - sum(ns)
            c = sum(min(maxj, s - minnat, s - n) for s, n in zip(sizes, ns, strict=True))
            opts.add((o, c))
        # keep the splits no other beats on both counts
        got = [x for x in opts if not any(y[0] <= x[0] and y[1] >= x[1] and y != x for y in opts)]
        if cacheable:
            pr.group_options[key] = got
        return got

    def rest_count(self, kind: int) -> int:
        b = 1 << kind
        h1, h2, h3, h4 = self.h
        held = (h1 & b != 0) + (h2 & b != 0) + (h3 & b != 0) + (h4 & b != 0)
        return self.pr.decks - held

    def available(self, melds: list[_CMeld], left: tuple[int, int, int, int]) -> bool:
        """Cheap proof that the rest of the deck holds every wildcard of the leaf.

        Counts, for every kind, how many open places might ask for it (each run:
        every kind its window could still reach; each set: its rank's kinds) and
        compares with the rest of the deck.  False only means "not proven".
        Counts are kept as planes, like the hand's: d1 holds the kinds asked for
        at least once, d2 at least twice, and so on; r1..r4 likewise for what
        the rest of the deck holds.
        """
        l1, l2, l3, l4 = left
        r1, r2, r3, r4 = self.rest_planes
        top = self.pr.top
        distinct = self.pr.distinct
        d1 = d2 = d3 = d4 = 0
        set_ranks = 0  # ranks holding a set
        shared = 0  # ranks holding several
        fresh = fresh_need = 0  # sets of a rank the hand has none of
        for m in melds:
            if m[0]:
                s, r_mask, ln = m[1], m[2], m[3]
                opn = ln - _popcount(r_mask)
                if not opn:
                    continue
                if s < 0:
                    return False  # an all-wildcard run: rare, costed exactly
                lo = (r_mask & -r_mask).bit_length() - 1
                hi = r_mask.bit_length() - 1
                ext = ln - (hi - lo + 1)
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
                if set_ranks >> r & 1 or d1 & _RANK_BITS[r]:
                    continue
                if _rank_count(r, l1, l2, l3, l4, False):
                    continue
                supply = _rank_count(r, r1, r2, r3, r4, False)
                suits = _rank_count(r, r1, 0, 0, 0, True)
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
                opn = size - min(size, _rank_count(r, l1, 0, 0, 0, True))
                if not opn:
                    continue
                free = 0
                for s in range(4):
                    b = 1 << (s * 13 + r - 1)
                    if l1 & b:
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
                if free < opn:
                    return False
            else:
                opn = size - min(size, _rank_count(r, l1, l2, l3, l4, False))
                if not opn:
                    continue
                supply = _rank_count(r, r1, r2, r3, r4, False) - _rank_count(
                    r, d1, d2, d3, d4, False
                )
                if supply < opn:
                    return False
        return True

    def gather(
        self,
        melds: list[_CMeld],
        left: tuple[int, int, int, int],
        opn: int,
        jc: int,
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
        l1, l2, l3, l4 = left
        pr = self.pr
        top = pr.top
        maxj = pr.maxj
        minnat = pr.minnat
        distinct = pr.distinct
        nj = self.nj
        cands = self.cands
        sure = self.sure
        rest = self.rest
        spare = nj - (jc if jc < nj else nj)  # jokers no place takes
        short = nj < jc  # more joker room than jokers: one more natural always helps
        any_open = False
        for m in melds:
            if m[0]:
                s, r_mask, ln = m[1], m[2], m[3]
                o = ln - _popcount(r_mask)
                if not o:
                    continue
                any_open = True
                if s < 0:
                    cands |= _ALL_NATURAL_OUTS
                    continue
                lo = (r_mask & -r_mask).bit_length() - 1
                hi = r_mask.bit_length() - 1
                ext = ln - (hi - lo + 1)
                wide = ext + (0 if pr.exact else spare)
                helps = proven and (short or o > min(maxj, ln - minnat))
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
                    have = _rank_count(r, l1, l2, l3, l4, distinct)
                    alone = not shared >> r & 1
                    if size <= have and alone:
                        continue
                    any_open = True
                    o = size - have
                    helps = proven and alone and (short or o > min(maxj, size - minnat))
                    for s in range(4):
                        k = s * 13 + r - 1
                        # a lone set of distinct suits holds every suit left
                        if alone and distinct and (l1 >> k) & 1:
                            continue
                        bit = 1 << (r * 4 + s)
                        cands |= bit
                        if helps and rest >> k & 1:
                            sure |= bit
                else:
                    any_open = True
                    for rr in range(1, 14):
                        if not _rank_count(rr, l1, l2, l3, l4, False):
                            cands |= 15 << (rr * 4)
        if any_open and self.rest_j > 0:
            cands |= 1
            if proven and short:
                sure |= 1
        self.cands = cands
        self.sure = sure

    # ---------------------------------------------------------------- exact leaf
    def exact(self, melds: list[_CMeld], left: tuple[int, int, int, int], floor: int) -> int:
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
        self, melds: list[_CMeld], left: tuple[int, int, int, int]
    ) -> list[list[list[_Place]]]:
        """Per meld group, every way to pin down its open places.

        An option is a list of entries, one per meld: (joker cap, places, suits
        of the set's own naturals or None for a run / a set of any suits), each
        place being the natural kinds that may fill it (a joker may fill any).
        """
        l1, l2, l3, l4 = left
        pr = self.pr
        top = pr.top
        maxj = pr.maxj
        minnat = pr.minnat
        distinct = pr.distinct
        groups: list[list[list[_Place]]] = []
        by_rank: dict[int, list[int]] = {}
        fresh: list[int] = []
        for m in melds:
            if m[0]:
                s, r_mask, ln = m[1], m[2], m[3]
                cap = min(maxj, ln - minnat)
                opts: list[list[_Place]] = []
                for su in [s] if s >= 0 else [0, 1, 2, 3]:
                    if r_mask:
                        lo = (r_mask & -r_mask).bit_length() - 1
                        hi = r_mask.bit_length() - 1
                    else:
                        lo, hi = top, 1
                    for a in range(max(1, hi - ln + 1), min(lo, top - ln + 1) + 1):
                        places = [
                            [su * 13 + (pos - 1) % 13]
                            for pos in range(a, a + ln)
                            if not r_mask >> pos & 1
                        ]
                        opts.append([(cap, places, None)])
                groups.append(opts)
            elif m[1] == 0:
                fresh.append(m[2])
            else:
                by_rank.setdefault(m[1], []).append(m[2])
        for r, sizes in by_rank.items():
            counts = tuple(_suit_counts(r, l1, l2, l3, l4))
            key = (r, tuple(sizes), counts)
            got = pr.rank_layouts.get(key)
            if got is None:
                got = pr.rank_layouts[key] = _rank_layouts(
                    r, sizes, list(counts), distinct, maxj, minnat
                )
            groups.append(got)
        if fresh:
            free = [
                r
                for r in range(1, 14)
                if r not in by_rank and not _rank_count(r, l1, l2, l3, l4, False)
            ]
            opts_f: list[list[_Place]] = []
            for combo in permutations(free, len(fresh)):
                option: list[_Place] = []
                for r, size in zip(combo, fresh, strict=True):
                    kinds = [s * 13 + r - 1 for s in range(4)]
                    option.append(
                        (min(maxj, size - minnat), [kinds] * size, set() if distinct else None)
                    )
                opts_f.append(option)
            groups.append(opts_f)
        return groups

    def fill(self, layout: list[_Place], floor: int, bound: int) -> int:
        """Fewest cards from the rest of the deck that fill every place of a layout
        (``bound`` or more if none does better); stops early at ``floor``."""
        places: list[tuple[int, list[int]]] = []
        for mi, (cap, ps, _) in enumerate(layout):
            if cap < 0:
                return bound
            for kinds in ps:
                places.append((mi, kinds))
        filling = _Filling(self, layout, places, floor, bound)
        filling.rec(0, 0)
        return filling.best


class _Filling:
    """One layout's filling search (_Cost.fill): its state, and the recursion as a
    method with int arguments (compiled, a closure would box them)."""

    __slots__ = (
        "best",
        "caps",
        "cost",
        "floor",
        "jokers",
        "nj",
        "own",
        "places",
        "rest_j",
        "supply",
        "total",
    )

    def __init__(
        self,
        cost: _Cost,
        layout: list[_Place],
        places: list[tuple[int, list[int]]],
        floor: int,
        bound: int,
    ) -> None:
        self.cost = cost
        self.nj = cost.nj
        self.rest_j = cost.rest_j
        self.places = places
        self.total = len(places)
        self.caps = [e[0] for e in layout]
        self.supply: dict[int, int] = {}
        self.jokers = [0] * len(layout)
        self.own: list[set[int] | None] = [None if e[2] is None else set(e[2]) for e in layout]
        self.floor = floor
        self.best = bound

    def rec(self, i: int, used_j: int) -> bool:
        nj = self.nj
        total = self.total
        # the cost is the places the hand's jokers do not take
        if total - min(nj, used_j + total - i) >= self.best:
            return False
        if i == total:
            self.best = total - (used_j if used_j < nj else nj)
            return self.best <= self.floor
        mi, kinds = self.places[i]
        jokers = self.jokers
        if jokers[mi] < self.caps[mi] and used_j - nj < self.rest_j:
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
_Place = tuple[int, list[list[int]], "set[int] | None"]


def _product(options: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [()]
    for opts in options:
        out = [(*acc, o) for acc in out for o in opts]
    return out


def _rank_layouts(
    r: int, sizes: list[int], counts: list[int], distinct: bool, maxj: int, minnat: int
) -> list[list[_Place]]:
    """Ways the hand's naturals of rank r can go to that rank's sets.

    A set takes as many as it can (more naturals never cost more); with several
    sets of the rank every split is tried, and with distinct suits every choice
    of suits, since the suits a set holds are the ones its places cannot take.
    """
    kinds = [s * 13 + r - 1 for s in range(4)]
    caps = [min(maxj, size - minnat) for size in sizes]
    out: list[list[_Place]] = []
    if not distinct:
        total = sum(counts)
        for ns in _product([range(min(size, total) + 1) for size in sizes]):
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


def _add_card(h: tuple[int, int, int, int], kind: int) -> tuple[int, int, int, int] | None:
    """The planes with one more natural of this kind (None past four copies)."""
    h1, h2, h3, h4 = h
    b = 1 << kind
    if not h1 & b:
        return (h1 | b, h2, h3, h4)
    if not h2 & b:
        return (h1, h2 | b, h3, h4)
    if not h3 & b:
        return (h1, h2, h3 | b, h4)
    if not h4 & b:
        return (h1, h2, h3, h4 | b)
    return None


def _outs(cs: _Cost, missing: int) -> tuple[tuple[int, int], ...]:
    """Kinds from the rest of the deck after which one card fewer is missing."""
    pr = cs.pr
    out: list[tuple[int, int]] = []
    cands = cs.cands
    while cands:
        low = cands & -cands
        cands ^= low
        bit = low.bit_length() - 1
        kind = (0, -1) if bit == 0 else (bit >> 2, bit & 3)
        if cs.sure & low:
            out.append(kind)
            continue
        rank, suit = kind
        if rank == JOKER_RANK:
            if cs.rest_j <= 0:
                continue
            h = cs.h
            nj = cs.nj + 1
        else:
            k = suit * 13 + rank - 1
            if cs.rest_count(k) <= 0:
                continue
            got = _add_card(cs.h, k)
            if got is None:
                continue
            h = got
            nj = cs.nj
        if missing == 1:
            if _feasible(pr, cs.rd, h, nj):
                out.append(kind)
            continue
        probe = _Cost(pr, cs.rd, h, nj, missing - 1, False, True)
        probe.run()
        if probe.best <= missing - 1:
            out.append(kind)
    return tuple(out)


def _feasible(pr: _Prep, rd: _Round, h: tuple[int, int, int, int], nj: int) -> bool:
    """can_lay on planes (no physical cards needed: the search stops before ids)."""
    h1, h2, h3, h4 = h
    rc = [0] * 14
    rcd = [0] * 14
    for r in range(1, 14):
        rcd[r] = _rank_count(r, h1, 0, 0, 0, True)
        rc[r] = _rank_count(r, h1, h2, h3, h4, False)
    st = _Best(pr, rd, (), nj, h2 != 0)
    st.first = True
    try:
        _search_best(st, h1, h2, h3, h4, rc, rcd)
    except _Found:
        return True
    return False


def can_lay(hand: Sequence[Card], rules: RuleSet, round_number: int) -> bool:
    """Whether the hand can lay its round's contract (feasibility only)."""
    pr = _prep(rules)
    rd = _round(pr, round_number)
    h1, h2, h3, h4, nj, rc, rcd = _parse(hand)
    st = _Best(pr, rd, hand, nj, h2 != 0)
    st.first = True
    try:
        _search_best(st, h1, h2, h3, h4, rc, rcd)
    except _Found:
        return True
    return False


def missing_cards(
    hand: Sequence[Card], rules: RuleSet, round_number: int, limit: int = 4
) -> int | None:
    """Fewest cards from the rest of the deck that make the contract layable.

    0 when the hand can lay it now; None when more than ``limit`` are needed.
    """
    if limit < 0:
        raise InvalidActionError("limit must be >= 0")
    if can_lay(hand, rules, round_number):
        return 0
    if limit == 0:
        return None
    pr = _prep(rules)
    rd = _round(pr, round_number)
    h1, h2, h3, h4, nj = _planes(hand)
    cs = _Cost(pr, rd, (h1, h2, h3, h4), nj, limit, False, False)
    cs.best = limit + 1
    cs.run()
    return cs.best if cs.best <= limit else None


def analyse(hand: Sequence[Card], rules: RuleSet, round_number: int, limit: int = 4) -> Analysis:
    """Everything the solver can say about a hand and its round's contract.

    ``outs`` is empty when the hand can already lay (nothing lowers 0) and when
    more than ``limit`` cards are missing (the count itself is unknown).
    """
    if limit < 0:
        raise InvalidActionError("limit must be >= 0")
    # Best melds first: on a hand that lays its contract that search is the
    # answer, and on one that cannot it fails fast (a few us, against tens for
    # the cost search; measured in BENCHMARKS.md).
    pr = _prep(rules)
    rd = _round(pr, round_number)
    best, h, nj = _best(hand, pr, rd)
    if best is not None:
        return Analysis(True, best, 0, ())
    # one search finds the cost and gathers the kinds every best leaf leaves open
    # (a better leaf clears what worse ones gathered)
    cs = _Cost(pr, rd, h, nj, limit, True, False)
    cs.run()
    if cs.best > limit:
        return Analysis(False, None, None, ())
    return Analysis(False, None, cs.best, _outs(cs, cs.best))


# the preset rule sets' tables, built once at import (a few ms each) rather than
# on some unlucky first call
for _preset in PRESETS.values():
    _prep(_preset)
