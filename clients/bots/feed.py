"""Whiskertrail variants of ``closer``: discards that do not feed the opponent's known
collection (``FeedBot``), and shedding points once an open opponent is near out (``RushBot``).

At two whiskertrail seats the only seat that can take a discard is the opponent, and
whether it took this seat's last discard is public: between this seat's discard and its
next draw the stock shrank by one card (a stock draw) or not at all (the pile).  So this
seat knows some of the cards the opponent holds on purpose.  ``expert`` keeps a card
that fits a meld on the table (``danger``), but not one that fits what the opponent
collects in its hand.  ``FeedBot`` counts, for each closed-hand discard, the cards
the opponent took from the pile this deal that it would go with: the same rank (a
group) or the same suit within two ranks (a run), and ranks it after the table's
danger and before live outs; ``FeedTieBot`` only to break ties of live outs.
``FeedOpenBot`` also applies it to open-hand discards, before the penalty shed.

Only at two seats (at more, which seat took the pile is not known from the sizes).

``RushBot``: an open opponent's hand size is public; once one holds at most
``rush_cards`` cards, closed-hand discards score live outs + ``rush_alpha`` × the
penalty shed (``racer``'s rule, with a larger weight and at any table size), since the
round is about to end with this hand counted.

``HoldBot`` keeps extra melds in hand once open (two seats); ``NextDangerBot`` is the
next seat's danger, measured here and then folded into ``closer``; ``RaceNextBot``
waits for the next seat to open before ``racer``'s rule; ``ClaimDangerOffBot`` drops
the danger in contract.  None but the next seat's danger was kept: measured in
docs/BOT_STUDIES.md.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from clients.bots.base import Situation
from clients.bots.closer import CloserBot, next_open
from clients.bots.greedy import fits_table
from clients.bots.outs import can_go_out
from clients.bots.racer import weighted_rank
from clients.bots.strong import DiscardRank
from engine.actions import Action, Discard, ExtraMeld
from engine.cards import Card, card
from engine.game.moves import canonical_extra_melds

__all__ = [
    "ClaimDangerOffBot",
    "FeedBot",
    "FeedOpenBot",
    "FeedTieBot",
    "HoldBot",
    "HoldTwoBot",
    "NextDangerBot",
    "RaceNextBot",
    "RushBot",
    "RushFourBot",
    "RushHalfBot",
    "RushHighBot",
    "RushTwoBot",
    "feeds",
    "near_out",
]


def feeds(c: Card, taken: Sequence[Card]) -> int:
    """How many of the opponent's known pile draws ``c`` would go with."""
    if c.is_joker:
        return len(taken)
    n = 0
    for t in taken:
        if t.is_joker:
            continue
        if t.rank == c.rank or (t.suit == c.suit and abs(t.rank - c.rank) <= 2):
            n += 1
    return n


class FeedBot(CloserBot):
    name = "feed"

    #: where the count goes in a closed discard's rank: "live" (before live outs),
    #: "tie" (after them)
    feed_place: str = "live"
    #: open discards too: keep a card that feeds, before the penalty shed
    feed_open: bool = False

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._feed_deal: tuple[int, int] | None = None
        self._last: tuple[int, int] | None = None  # (card id, stock size) at my discard
        self._taken: list[Card] = []  # the opponent's pile draws of my discards, this deal

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        deal = (sit.round_number, sit.exhaustions)
        if deal != self._feed_deal:
            self._feed_deal = deal
            self._last = None
            self._taken = []
        elif self._last is not None and sit.phase == "draw":
            card_id, stock = self._last
            if sit.seats == 2 and sit.stock_size == stock:
                self._taken.append(card(card_id, sit.rules.decks))
            self._last = None
        action = super().choose(sit, legal, rng)
        if isinstance(action, Discard):
            self._last = (action.card, sit.stock_size)
        return action

    def _active(self, sit: Situation) -> bool:
        return sit.seats == 2 and bool(self._taken) and sit.rules.draw_from_discard

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if not self._active(sit):
            return super()._closed_rank(sit)
        taken = tuple(self._taken)
        tie = self.feed_place == "tie"

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            danger = 1 if self.danger and sit.table and fits_table(c, sit) else 0
            fed = feeds(c, taken)
            penalty = -sit.rules.penalty(c)
            if tie:
                return (missing, danger, -live, fed, penalty, c.id)
            return (missing, danger, fed, -live, penalty, c.id)

        return rank

    def _open_key(self, sit: Situation) -> Callable[[Discard], tuple[int, ...]]:
        if not (self.feed_open and self._active(sit)):
            return super()._open_key(sit)
        by_id = {c.id: c for c in sit.hand}
        penalty = sit.rules.penalty
        taken = tuple(self._taken)

        def key(action: Discard) -> tuple[int, ...]:
            c = by_id[action.card]
            fits = 1 if self.open_fits and sit.table and fits_table(c, sit) else 0
            return (fits, feeds(c, taken), -penalty(c), c.id)

        return key


class FeedTieBot(FeedBot):
    name = "feedtie"
    feed_place = "tie"


class FeedOpenBot(FeedBot):
    name = "feedopen"
    feed_open = True


def near_out(sit: Situation, cards: int) -> bool:
    """Whether an open opponent holds at most ``cards`` cards (a free pile only)."""
    if not sit.rules.draw_from_discard:
        return False
    return any(
        opened and s != sit.seat and sit.hand_sizes[s] <= cards
        for s, opened in enumerate(sit.opened_seats)
    )


class RushBot(CloserBot):
    """``racer``'s rule with a larger weight once an open opponent is near going out
    (whiskertrail: its hand size is public), at every table size."""

    name = "rush"

    rush_cards: int = 3  # an open opponent holding at most this many cards
    rush_alpha: float = 1.0  # penalty points worth one live out then

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if not near_out(sit, self.rush_cards):
            return super()._closed_rank(sit)
        return weighted_rank(sit, self.rush_alpha, self.danger)


class RushHalfBot(RushBot):
    name = "rushhalf"
    rush_alpha = 0.5


class RushTwoBot(RushBot):
    name = "rush2"
    rush_cards = 2
    rush_alpha = 2.0


class RushFourBot(RushBot):
    name = "rush4"
    rush_cards = 4


class RushHighBot(RushBot):
    name = "rushhigh"
    rush_alpha = 1.5


class HoldBot(CloserBot):
    """Two seats, once open: keep an extra meld in hand (the opponent lays nothing off
    on it, and reads nothing from it) until it lets the hand go out this turn or the
    open opponent holds at most ``hold_cards`` cards; open discards keep the cards of a
    meld the hand holds."""

    name = "hold"

    hold_cards: int = 4

    def _holding(self, sit: Situation) -> bool:
        return (
            sit.seats == 2
            and sit.opened
            and sit.rules.extra_melds
            and not near_out(sit, self.hold_cards)
            and not can_go_out(sit.hand, sit.table, sit.rules)
        )

    def _decide(self, sit: Situation, legal: Sequence[Action]) -> Action:
        if (
            sit.phase == "play"
            and any(isinstance(a, ExtraMeld) for a in legal)
            and self._holding(sit)
        ):
            legal = [a for a in legal if not isinstance(a, ExtraMeld)]
        return super()._decide(sit, legal)

    def _open_key(self, sit: Situation) -> Callable[[Discard], tuple[int, ...]]:
        if not self._holding(sit):
            return super()._open_key(sit)
        held = {c.id for _, cards in canonical_extra_melds(sit.hand, sit.rules) for c in cards}
        base = super()._open_key(sit)

        def key(action: Discard) -> tuple[int, ...]:
            return (1 if action.card in held else 0, *base(action))

        return key


class HoldTwoBot(HoldBot):
    name = "hold2"
    hold_cards = 2


class NextDangerBot(CloserBot):
    """The table's danger only when the seat that draws next is open (measured as this
    variant, then folded into ``closer``: its ``next_danger``)."""

    name = "nextdanger"
    next_danger = True


class RaceNextBot(CloserBot):
    """``racer``'s rule only while the next seat (the one that may take the discard) is
    open, not any opponent."""

    name = "racenext"

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if sit.seats >= self.min_seats and sit.rules.draw_from_discard and not next_open(sit):
            saved, self.min_seats = self.min_seats, 99  # racer's rule off: expert's rank
            try:
                return super()._closed_rank(sit)
            finally:
                self.min_seats = saved
        return super()._closed_rank(sit)


class ClaimDangerOffBot(CloserBot):
    """Contract (no free pile): no danger at all.  A discard leaves the table only by a
    May I?, and ``expert`` (and ``closer``) never claim once open, so a card that fits a
    table meld is no gift to an open seat among them."""

    name = "claimdangeroff"

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        if sit.rules.draw_from_discard:
            return super()._closed_rank(sit)
        base = super()._closed_rank(sit)

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (key[0], key[1], 0, *key[3:])  # contract's danger, third: zero

        return rank
