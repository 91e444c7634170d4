"""Whiskertrail variants of ``closer``: discard what the next seat is known to pass.

At a free pile with four seats only the next seat can take this seat's discard.
Whether it did is half public: between this seat's discard and its next draw the
three other seats draw, and if the stock shrank by exactly three (no rebuild, same
round) all three drew from the stock, so the next seat passed the card.  A closed
``expert``-like seat takes the pile only when the card lowers its ``missing``; a card
of the same rank it passed is likely to be passed again.  ``PassTieBot``: while the
next seat is closed, closed-hand discards prefer such a card to break ties of the
score ``closer`` ranks by; ``PassLiveBot``: before that score (after ``missing``).
``PassOpenBot``: and open-hand discards of equal penalty too.

Measured against ``closer`` in docs/BOT_STUDIES.md (2026-12-06): none kept.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Self

from clients.bots.base import Situation
from clients.bots.closer import CloserBot, next_open
from clients.bots.strong import DiscardRank
from engine.actions import Action, Discard
from engine.cards import Card, card

__all__ = ["PassLiveBot", "PassOpenBot", "PassTieBot", "passed_rank"]


def passed_rank(c: Card, passed: frozenset[int]) -> int:
    """0 when the next seat passed a card of ``c``'s rank this deal (jokers never)."""
    return 0 if not c.is_joker and c.rank in passed else 1


class PassTieBot(CloserBot):
    name = "passtie"

    #: where the "not passed" flag goes in a closed discard's rank: "tie" (after the
    #: live-outs score) or "live" (before it)
    pass_place: str = "tie"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._pass_deal: tuple[int, int] | None = None
        self._last: tuple[int, int] | None = None  # (card id, stock size) at my discard
        self._passed_ranks: set[int] = set()

    def clone(self) -> Self:
        twin = super().clone()
        twin._passed_ranks = set(self._passed_ranks)
        return twin

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        deal = (sit.round_number, sit.exhaustions)
        if deal != self._pass_deal:
            self._pass_deal = deal
            self._last = None
            self._passed_ranks = set()
        elif self._last is not None and sit.phase == "draw":
            card_id, stock = self._last
            if sit.seats > 2 and sit.stock_size == stock - (sit.seats - 1):
                c = card(card_id, sit.rules.decks)
                if not c.is_joker:
                    self._passed_ranks.add(c.rank)
            self._last = None
        action = super().choose(sit, legal, rng)
        if isinstance(action, Discard) and not next_open(sit):
            self._last = (action.card, sit.stock_size)
        return action

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        base = super()._closed_rank(sit)
        if (
            sit.seats < 3
            or not sit.rules.draw_from_discard
            or next_open(sit)
            or not self._passed_ranks
        ):
            return base
        passed = frozenset(self._passed_ranks)
        at = 3 if self.pass_place == "tie" else 2

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (*key[:at], passed_rank(c, passed), *key[at:])

        return rank


class PassLiveBot(PassTieBot):
    name = "passlive"
    pass_place = "live"


class PassOpenBot(PassTieBot):
    """``passtie``, and open-hand discards too: among cards of the same penalty (and
    lay-off), a rank the closed next seat passed first."""

    name = "passopen"

    def _open_key(self, sit: Situation) -> Callable[[Discard], tuple[int, ...]]:
        base = super()._open_key(sit)
        if sit.seats < 3 or not sit.rules.draw_from_discard or next_open(sit):
            return base
        if not self._passed_ranks:
            return base
        passed = frozenset(self._passed_ranks)
        by_id = {c.id: c for c in sit.hand}

        def key(action: Discard) -> tuple[int, ...]:
            k = base(action)
            return (*k[:2], passed_rank(by_id[action.card], passed), *k[2:])

        return key
