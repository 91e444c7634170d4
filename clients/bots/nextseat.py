"""Whiskertrail variants of ``closer`` for when the next seat is open (four seats).

Only the next seat can take this seat's discard at a free pile.  Once it has laid its
contract, a discard it can lay off brings it a card nearer going out, and when it goes
out this closed hand is counted whole.  ``NextRushBot``: while the next seat is open,
``racer``'s weight of the penalty shed is ``next_alpha`` (1.0; ``closer``: 0.5).
``NextGuardBot``: while the next seat is open and holds at most ``guard_cards`` cards,
the table's danger ranks before ``missing`` (``closer``: after it).
``DangerFewBot``: the next seat's danger only once it holds at most ``danger_cards``.
``ClosedNextRushBot`` (and ``ClosedNextCalmBot``, ``ClosedNextZeroBot``): another ``racer``
weight while the next seat is closed.
``PileLiveBot``: closed, the pile's top at equal ``missing`` for more live outs.

Measured against ``closer`` in docs/BOT_STUDIES.md (2026-12-06): none kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.closer import CloserBot, next_open
from clients.bots.racer import racing, weighted_rank
from clients.bots.strong import DiscardRank
from engine.actions import Action
from engine.cards import Card

__all__ = [
    "ClosedNextCalmBot",
    "ClosedNextRushBot",
    "ClosedNextRushTwoBot",
    "ClosedNextZeroBot",
    "DangerFewBot",
    "DangerFewSixBot",
    "NextGuardBot",
    "NextRushBot",
    "PileLiveBot",
    "PileLiveThreeBot",
]


def _next_cards(sit: Situation) -> int:
    nxt = (sit.seat + 1) % sit.seats
    return sit.hand_sizes[nxt] if nxt < len(sit.hand_sizes) else 99


class NextRushBot(CloserBot):
    name = "nextrush"
    next_alpha: float = 1.0

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if next_open(sit) and racing(sit, self.min_seats):
            return weighted_rank(sit, self.next_alpha, self.danger)
        return super()._closed_rank(sit)


class NextGuardBot(CloserBot):
    name = "nextguard"
    guard_cards: int = 2

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        base = super()._closed_rank(sit)
        if not (
            sit.rules.draw_from_discard
            and sit.seats >= 3
            and next_open(sit)
            and _next_cards(sit) <= self.guard_cards
        ):
            return base

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (key[1], key[0], *key[2:])  # the danger first, then missing

        return rank


class PileLiveBot(CloserBot):
    """At three seats or more (whiskertrail), closed: take the pile's top at equal
    ``missing`` when it adds at least ``pile_gain`` live outs (a passed card is buried:
    only this seat could draw it)."""

    name = "pilelive"
    pile_gain: int = 1

    def _draw(self, sit: Situation, legal: Sequence[Action]) -> Action:
        self.pile_live_gain = self.pile_gain if sit.seats >= 3 else 0
        return super()._draw(sit, legal)


class PileLiveThreeBot(PileLiveBot):
    name = "pilelive3"
    pile_gain = 3


class ClosedNextRushBot(CloserBot):
    """While the race is on and the next seat is closed (it takes a discard only for
    its contract), ``racer``'s weight of the penalty shed is ``closed_alpha`` (1.0)."""

    name = "closednextrush"
    closed_alpha: float = 1.0

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if next_open(sit) or not racing(sit, self.min_seats):
            return super()._closed_rank(sit)
        base = weighted_rank(sit, self.closed_alpha, self.danger)

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (key[0], 0, *key[2:])  # the next seat's danger: none while it is closed

        return rank


class ClosedNextRushTwoBot(ClosedNextRushBot):
    name = "closednextrush2"
    closed_alpha = 2.0


class DangerFewBot(CloserBot):
    """The next seat's danger only while it is open *and* holds at most ``danger_cards``
    cards (``closer``: whenever it is open): a lay-off matters most near its end."""

    name = "dangerfew"
    danger_cards: int = 4

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        base = super()._closed_rank(sit)
        if not sit.rules.draw_from_discard or not next_open(sit):
            return base
        if _next_cards(sit) <= self.danger_cards:
            return base

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (key[0], 0, *key[2:])

        return rank


class DangerFewSixBot(DangerFewBot):
    name = "dangerfew6"
    danger_cards = 6


class ClosedNextCalmBot(ClosedNextRushBot):
    name = "closednextcalm"
    closed_alpha = 0.25


class ClosedNextZeroBot(ClosedNextRushBot):
    name = "closednext0"
    closed_alpha = 0.0
