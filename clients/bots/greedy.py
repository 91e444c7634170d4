"""``greedy``: a one-step player that leans on the solver's ``missing`` count.

* Lays the contract as soon as ``LayContract()`` is legal, then lays off every card it
  can (highest penalty first), lays extra melds where the rules allow them and swaps
  jokers back into its hand where it can.
* Draws (or, May I?, claims) the discard pile's top only when it lowers ``missing``
  (``engine.solver.missing_cards`` of hand + card against the hand alone); once open,
  when the card fits a meld on the table.
* Discards the card whose removal keeps ``missing`` lowest, ties broken by the highest
  penalty (then the lowest id, so choices are reproducible).

:func:`greedy_action` works on a :class:`~clients.bots.base.Situation`, so the same
policy serves the API bot and the simulations of ``strong``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots.base import Bot, Situation
from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    PassClaim,
    SwapJoker,
)
from engine.cards import Card
from engine.melds import layoff_ends
from engine.solver import missing_cards

LIMIT = 4
_FAR = LIMIT + 1


def missing(hand: Sequence[Card], sit: Situation) -> int:
    """Cards short of the contract (``LIMIT + 1`` when more than ``LIMIT``)."""
    found = missing_cards(hand, sit.rules, sit.round_number, LIMIT)
    return _FAR if found is None else found


def fits_table(c: Card, sit: Situation) -> bool:
    if c.is_joker and not sit.rules.layoff_jokers:
        return False
    return any(layoff_ends(meld, c, sit.rules) for meld in sit.table)


def wants(c: Card, sit: Situation) -> bool:
    """Whether taking ``c`` helps: lowers ``missing`` (closed) or lays off (open)."""
    if sit.opened:
        return fits_table(c, sit)
    before = missing(sit.hand, sit)
    if before == 0:
        return False
    return missing((*sit.hand, c), sit) < before


def discard_order(sit: Situation, discards: Sequence[Discard]) -> list[Discard]:
    """The discards best first: lowest ``missing`` after it, then highest penalty, lowest id."""
    by_id = {c.id: c for c in sit.hand}
    memo: dict[tuple[int, int], int] = {}

    def key(action: Discard) -> tuple[int, int, int]:
        c = by_id[action.card]
        if sit.opened:
            m = 0
        else:
            m = memo.get(c.kind, -1)
            if m < 0:
                m = memo[c.kind] = missing(tuple(x for x in sit.hand if x is not c), sit)
        return (m, -sit.rules.penalty(c), c.id)

    return sorted(discards, key=key)


def progress_action(sit: Situation, legal: Sequence[Action]) -> Action | None:
    """The melding action greedy takes first, if any: contract, extra meld, lay-off, swap."""
    for action in legal:
        if isinstance(action, LayContract):
            return action
    melds = [a for a in legal if isinstance(a, ExtraMeld)]
    if melds:
        return max(melds, key=lambda a: len(a.meld.cards))
    layoffs = [a for a in legal if isinstance(a, LayOff)]
    if layoffs:
        by_id = {c.id: c for c in sit.hand}
        return max(layoffs, key=lambda a: (sit.rules.penalty(by_id[a.card]), -a.card))
    for action in legal:
        if isinstance(action, SwapJoker):
            return action
    return None


def greedy_action(sit: Situation, legal: Sequence[Action]) -> Action:
    if sit.phase == "claim":
        top = sit.discard_top
        if top is not None and any(isinstance(a, Claim) for a in legal) and wants(top, sit):
            return Claim()
        return next((a for a in legal if isinstance(a, PassClaim)), legal[0])
    draws = [a for a in legal if isinstance(a, Draw)]
    if draws:
        pile = Draw(DrawSource.DISCARD)
        if pile in draws and sit.discard_top is not None and wants(sit.discard_top, sit):
            return pile
        stock = Draw(DrawSource.STOCK)
        return stock if stock in draws else draws[0]
    progress = progress_action(sit, legal)
    if progress is not None:
        return progress
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        return discard_order(sit, discards)[0]
    return next((a for a in legal if isinstance(a, EndTurn)), legal[0])


class GreedyBot(Bot):
    name = "greedy"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        return greedy_action(situation, legal)
