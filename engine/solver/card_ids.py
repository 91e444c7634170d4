"""Physical card ids, looked at only when ids decide: ties, and the answer.

Sets of physical cards are int masks over card ids.  A sorted id list is then
the mask read from bit 0 up, and list comparison only needs the lowest bit where
two masks differ (``lex_less``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Final

from engine.cards import Card

KIND_MASK: Final = (1 << 52) - 1


RANK_IDS: Final = tuple(
    sum(1 << (d * 52 + s * 13 + r - 1) for d in range(4) for s in range(4)) if 1 <= r <= 13 else 0
    for r in range(15)
)


KIND_IDS: Final = tuple(sum(1 << (d * 52 + k) for d in range(4)) for k in range(52))


def lex_less(a: int, b: int) -> bool:
    """sorted(ids of a) < sorted(ids of b), as Python compares lists."""
    x = a ^ b
    if not x:
        return False
    low = x & -x
    if a & low:
        # a's next id is smaller, unless b has run out (b is a prefix of a)
        return b >> low.bit_length() != 0
    return a >> low.bit_length() == 0


def lex_less_each(a: Sequence[int], b: Sequence[int]) -> bool:
    for x, y in zip(a, b, strict=True):
        if x != y:
            return lex_less(x, y)
    return False


def lowest_bits(x: int, n: int) -> int:
    out = 0
    for _ in range(n):
        low = x & -x
        out |= low
        x ^= low
    return out


def hand_ids(hand: Sequence[Card]) -> tuple[int, list[int], dict[int, Card]]:
    """A hand's natural ids (a mask), its jokers' ids (in hand order), its cards by id."""
    natural_ids = 0
    jokers: list[int] = []
    by_id: dict[int, Card] = {}
    for c in hand:
        i = c.id
        by_id[i] = c
        if c.rank:
            natural_ids |= 1 << i
        else:
            jokers.append(i)
    return natural_ids, jokers, by_id


class HandIds:
    """The hand's physical ids, looked at only when ids decide (ties, the answer)."""

    __slots__ = ("by_deck", "by_id", "decks", "joker_prefix", "natural_ids", "twins")

    def __init__(
        self, natural_ids: int, jokers: list[int], decks: int, twins: bool, by_id: dict[int, Card]
    ) -> None:
        self.by_id = by_id  # the hand's cards, to give back the very objects
        self.natural_ids = natural_ids
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
            self.by_deck: tuple[int, ...] = (natural_ids & KIND_MASK, natural_ids >> 52)
        else:
            self.by_deck = tuple((natural_ids >> (52 * d)) & KIND_MASK for d in range(decks))

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


def kind_levels(ids: int) -> tuple[int, ...]:
    """Kind multiset of an id mask, as unary levels (kinds used at least 1, 2, ... times)."""
    lv = [0, 0, 0, 0]
    while ids:
        x = ids & KIND_MASK
        lv[3] |= lv[2] & x
        lv[2] |= lv[1] & x
        lv[1] |= lv[0] & x
        lv[0] |= x
        ids >>= 52
    return tuple(m for m in lv if m)


def split_distinct(pool: int, sizes: list[int]) -> list[int]:
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
        parts = split_rest(list(union), sizes)
        if parts is not None:
            return parts
    raise AssertionError("sets that fitted in count space found no cards")


def split_rest(ids: list[int], sizes: list[int]) -> list[int] | None:
    if not sizes:
        return []
    for part in combinations(ids, sizes[0]):
        if len({(i % 52) // 13 for i in part}) != len(part):
            continue
        rest = [i for i in ids if i not in part]
        tail = split_rest(rest, sizes[1:])
        if tail is not None:
            m = 0
            for i in part:
                m |= 1 << i
            return [m, *tail]
    return None
