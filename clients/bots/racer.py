"""``racer``: ``expert``, shedding points sooner once the race to go out has begun.

``expert`` ranks its closed-hand discards by the ``missing`` count the hand is left
with, then (whiskertrail) whether the card fits a table meld, then its live outs, and
sheds the higher penalty only to break a tie.  At a table of three or more seats where
the next seat draws the discard for free (whiskertrail), once an opponent has laid its
contract the round's end is near: four hands race for it, and a card kept for its outs
is as likely to be counted against the hand as to be used.  ``racer`` then scores a
discard by its live outs *plus* ``alpha`` (0.5 by default) times the penalty it sheds, so a
costly card goes before a cheap one unless the cheap one gives up that many more outs.
Everywhere else (two seats, contract, before anybody opens) it plays ``expert``'s
moves, and those games are ``expert``'s exactly.

Measured (docs/BOTS.md, "The champion"): the substitution design against ``expert``
in four-seat whiskertrail; the same solver calls as ``expert`` (one per card kind).
"""

from __future__ import annotations

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import fits_table
from clients.bots.strong import DiscardRank
from engine.cards import Card

__all__ = ["RacerBot", "racing", "weighted_rank"]


def racing(sit: Situation, min_seats: int) -> bool:
    """Whether the race is on: a free pile, ``min_seats`` seats or more, an opponent open."""
    if not sit.rules.draw_from_discard or sit.seats < min_seats:
        return False
    return any(opened for s, opened in enumerate(sit.opened_seats) if s != sit.seat)


class RacerBot(ExpertBot):
    name = "racer"

    alpha: float = 0.5  # penalty points worth one live out once the race is on
    min_seats: int = 3  # the smallest table it races at

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if not racing(sit, self.min_seats):
            return super()._closed_rank(sit)
        return weighted_rank(sit, self.alpha, self.danger)


def weighted_rank(sit: Situation, alpha: float, danger: bool) -> DiscardRank:
    """Closed discards by ``missing``, the table's danger, then live outs + ``alpha`` ×
    the penalty shed (the higher penalty, then the card id, break ties)."""

    def rank(c: Card, missing: int, live: int) -> tuple[float, ...]:
        fits = 1 if danger and sit.table and fits_table(c, sit) else 0
        penalty = sit.rules.penalty(c)
        return (missing, fits, -live - alpha * penalty, -penalty, c.id)

    return rank  # type: ignore[return-value]
