"""A seat's hand: a tuple of cards kept in card id order, changed by copy."""

from __future__ import annotations

from bisect import bisect_right
from operator import attrgetter

from engine.cards import Card

_BY_ID = attrgetter("id")


def hand_with(hand: tuple[Card, ...], *cards: Card) -> tuple[Card, ...]:
    """``hand`` with ``cards`` added, kept in card id order (as every hand is)."""
    if len(cards) == 1:  # a draw: one card put in its place (a third of a sort's cost)
        i = bisect_right(hand, cards[0].id, key=_BY_ID)
        return hand[:i] + cards + hand[i:]
    return tuple(sorted((*hand, *cards), key=_BY_ID))


def hand_without(hand: tuple[Card, ...], c: Card) -> tuple[Card, ...]:
    """``hand`` without the physical card ``c``."""
    return tuple([x for x in hand if x is not c])  # (a list builds faster than a generator)
