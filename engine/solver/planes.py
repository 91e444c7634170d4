"""A hand as bit planes over the 52 natural kinds, and what is read from them.

Bit ``suit * 13 + rank - 1`` (the deck-0 card id) stands for a kind; plane *i*
(``held1`` .. ``held4``, or ``left1`` .. ``left4`` for what earlier melds left)
holds the kinds of which there are more than *i - 1* copies, so "does this run
fit" is one AND and "take it" a few ANDs and ORs.  A run's *positions* are bits
1..14 of one suit (14: an ace above the king).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.cards import Card
from engine.errors import InvalidActionError

SUIT_MASK: Final = (1 << 13) - 1


# bits of every suit's card of one rank; index 1..13 (0 and 14 unused)
RANK_BITS: Final = tuple(
    sum(1 << (s * 13 + r - 1) for s in range(4)) if 1 <= r <= 13 else 0 for r in range(15)
)


ALL_KINDS: Final = (1 << 52) - 1


def hand_planes(hand: Sequence[Card]) -> tuple[int, int, int, int, int]:
    """Unary count planes of the hand's natural kinds, and its joker count."""
    held1 = held2 = held3 = held4 = 0
    joker_count = 0
    for c in hand:
        r = c.rank
        if r == 0:
            joker_count += 1
            continue
        b = 1 << (c.suit * 13 + r - 1)
        if not held1 & b:
            held1 |= b
        elif not held2 & b:
            held2 |= b
        elif not held3 & b:
            held3 |= b
        elif not held4 & b:
            held4 |= b
        else:
            raise InvalidActionError(f"more than four copies of {c.code} in a hand")
    return held1, held2, held3, held4, joker_count


def suit_positions(held1: int, suit: int, ace_high: bool) -> int:
    """Position mask (bits 1..13, and 14 for a high ace) of a suit's kinds in h1."""
    m = (held1 >> (suit * 13)) & SUIT_MASK
    p = m << 1
    if ace_high and m & 1:
        p |= 1 << 14
    return p


def skeleton_kinds(r_mask: int, suit: int) -> int:
    """Kind bits of a run skeleton's positions (position 14 is the ace)."""
    return (((r_mask >> 1) | (r_mask >> 14)) & SUIT_MASK) << (suit * 13)


def popcount(x: int) -> int:
    """Set bits of x (below 2**56). Compiled, int.bit_count() is a boxed method
    call; these few native operations are not."""
    x -= (x >> 1) & 0x55555555555555
    x = (x & 0x33333333333333) + ((x >> 2) & 0x33333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 0x7F


def suit_bits(x: int) -> int:
    """Set bits among bits 0, 13, 26 and 39 of x (one rank's four suits)."""
    return (x & 1) + (x >> 13 & 1) + (x >> 26 & 1) + (x >> 39 & 1)


def rank_count(r: int, plane1: int, plane2: int, plane3: int, plane4: int, distinct: bool) -> int:
    """Naturals of rank r a single set could take from these planes."""
    n = suit_bits(plane1 >> (r - 1))
    if distinct or not n:
        return n
    if plane2 & RANK_BITS[r]:
        sh = r - 1
        n += suit_bits(plane2 >> sh) + suit_bits(plane3 >> sh) + suit_bits(plane4 >> sh)
    return n


def copies_per_suit(r: int, plane1: int, plane2: int, plane3: int, plane4: int) -> list[int]:
    out = []
    for s in range(4):
        b = 1 << (s * 13 + r - 1)
        out.append((plane1 & b != 0) + (plane2 & b != 0) + (plane3 & b != 0) + (plane4 & b != 0))
    return out


def suit_count_key(r: int, plane1: int, plane2: int, plane3: int, plane4: int) -> int:
    """The copies of rank r per suit in these planes, packed 3 bits a suit (suit 0 lowest)."""
    sh = r - 1
    return (
        suit_bits3(plane1 >> sh)
        + suit_bits3(plane2 >> sh)
        + suit_bits3(plane3 >> sh)
        + suit_bits3(plane4 >> sh)
    )


def suit_bits3(x: int) -> int:
    """Bits 0, 13, 26 and 39 of x moved to bits 0, 3, 6 and 9."""
    return (x & 1) | (x >> 10 & 8) | (x >> 20 & 64) | (x >> 30 & 512)


def sets_fit(demands: list[int], counts: list[int]) -> bool:
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


def parse_hand(hand: Sequence[Card]) -> tuple[int, int, int, int, int, list[int], list[int]]:
    """Planes, joker count, and per rank: naturals, and distinct suits."""
    held1 = held2 = held3 = held4 = 0
    joker_count = 0
    rank_naturals = [0] * 14
    rank_suits = [0] * 14
    for c in hand:
        r = c.rank
        if r == 0:
            joker_count += 1
            continue
        rank_naturals[r] += 1
        b = 1 << (c.suit * 13 + r - 1)
        if not held1 & b:
            held1 |= b
            rank_suits[r] += 1
        elif not held2 & b:
            held2 |= b
        elif not held3 & b:
            held3 |= b
        elif not held4 & b:
            held4 |= b
        else:
            raise InvalidActionError(f"more than four copies of {c.code} in a hand")
    return held1, held2, held3, held4, joker_count, rank_naturals, rank_suits


def with_card(planes: tuple[int, int, int, int], kind: int) -> tuple[int, int, int, int] | None:
    """The planes with one more natural of this kind (None past four copies)."""
    plane1, plane2, plane3, plane4 = planes
    b = 1 << kind
    if not plane1 & b:
        return (plane1 | b, plane2, plane3, plane4)
    if not plane2 & b:
        return (plane1, plane2 | b, plane3, plane4)
    if not plane3 & b:
        return (plane1, plane2, plane3 | b, plane4)
    if not plane4 & b:
        return (plane1, plane2, plane3, plane4 | b)
    return None
