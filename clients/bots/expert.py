"""``expert``: strong's card counting, with the claims, draws and discards of a rummy player.

``strong`` (greedy's plan, closed-hand discards by live outs) hands every other decision
to ``greedy``.  ``expert`` keeps strong's memory of the discards it has seen and its
closed-hand judgement, and changes what measured better (docs/BOTS.md has each number):

* **Don't feed the table.**  Among the closed-hand discards that leave the fewest
  ``missing``, it keeps a card that fits a meld on the table: an open seat would lay it
  off.  Where the next seat may draw the discard for free (whiskertrail) this comes
  before live outs; where it costs a May I? penalty card (contract), after them.
* **May I?** (contract): before opening, claim the discard when it lowers ``missing``;
  once open, never (the claimed card may lay off, but the penalty card stays, and in the
  rounds the turn cap ends every extra card is held to the end).  Never in a round of
  groups only (contract's 1 and 4): the turn cap ends those, everybody opens long
  before it, and every claim leaves one card more in hand at the end.
* **The discard pile** (whiskertrail): closed, take it only when it lowers ``missing``;
  open, when it lays off *or makes an extra meld* with the hand.
* **Open discards**: keep a card that lays off (contract's lay-down turn allows no
  lay-off: it waits a turn instead of going to a claimant), else shed the highest penalty.
* **Memory**: strong forgets the discards it has seen at a whiskertrail exhaustion; this
  bot also forgets them when a contract stock is rebuilt from the pile (the stock grows),
  since those cards are live again.

Laying the contract as soon as it can, lay-offs highest penalty first, extra melds,
joker swaps and ending the turn in contract round 7 are ``greedy``'s.  It reads only its
:class:`~clients.bots.base.Situation` and the legal actions and thinks with
``engine.solver`` on its own hand.  The class attributes are the measured options
(subclass to flip one); the defaults are the measured best.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

from clients.bots.base import Situation
from clients.bots.greedy import fits_table, greedy_action, missing, progress_action
from clients.bots.strong import DiscardRank, Kind, StrongBot, best_discard, live_outs
from engine.actions import Action, Claim, Discard, Draw, DrawSource, PassClaim
from engine.cards import Card
from engine.game.moves import canonical_extra_melds
from engine.rulesets import MeldKind

__all__ = ["ExpertBot", "capped_round", "makes_extra_meld"]

_PILE = Draw(DrawSource.DISCARD)
_STOCK = Draw(DrawSource.STOCK)


def makes_extra_meld(c: Card, sit: Situation) -> bool:
    """Whether ``c`` with the hand makes an extra meld that uses it (rules with extra melds)."""
    if not sit.rules.extra_melds:
        return False
    return any(c in cards for _, cards in canonical_extra_melds((*sit.hand, c), sit.rules))


def capped_round(sit: Situation) -> bool:
    """A contract-style round of groups only: a group takes at most ``set_max`` cards,
    so once the table's groups are full nobody can go out, and the turn cap ends the
    round (contract's rounds 1 and 4: 82–98 % of them in the published runs)."""
    if sit.rules.set_max is None:
        return False
    return all(m.kind is MeldKind.SET for m in sit.rules.contract(sit.round_number).melds)


class ExpertBot(StrongBot):
    name = "expert"

    claim_open: bool = False  # May I? once open, when the card lays off (greedy's)
    claim_capped: bool = False  # May I? in a round the turn cap ends (groups only)
    pile_live_gain: int = 0  # closed: take the pile at equal missing for this many more outs
    danger: bool = True  # closed discards: keep a card that fits the table
    open_pile: bool = True  # open: take the pile for an extra meld too
    open_fits: bool = True  # open discards: keep a card that lays off
    forget_rebuilt: bool = True  # forget the seen discards when a stock is rebuilt

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._round = -1
        self._stock = -1  # the stock's size at the last look: a rise means a rebuild

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        if sit.round_number != self._round:
            self._round = sit.round_number
        elif self.forget_rebuilt and sit.stock_size > self._stock:
            self._passed = set()  # the pile but its top went back into the stock
        self._stock = sit.stock_size
        return super().choose(sit, legal, rng)

    def _decide(self, sit: Situation, legal: Sequence[Action]) -> Action:
        if sit.phase == "claim":
            return self._claim(sit, legal)
        if sit.phase == "draw":
            return self._draw(sit, legal)
        if sit.phase != "play" or progress_action(sit, legal) is not None:
            return greedy_action(sit, legal)
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return greedy_action(sit, legal)  # contract round 7: end the turn
        if sit.opened:
            return self._open_discard(sit, discards)
        return self._closed_discard(sit, discards, self.seen(sit))

    # ------------------------------------------------------------------ taking cards
    def _claim(self, sit: Situation, legal: Sequence[Action]) -> Action:
        top = sit.discard_top
        passing = next((a for a in legal if isinstance(a, PassClaim)), legal[0])
        if top is None or not any(isinstance(a, Claim) for a in legal):
            return passing
        if not self.claim_capped and capped_round(sit):
            return passing
        if sit.opened:
            return Claim() if self.claim_open and fits_table(top, sit) else passing
        before = missing(sit.hand, sit)
        if before > 0 and missing((*sit.hand, top), sit) < before:
            return Claim()
        return passing

    def _draw(self, sit: Situation, legal: Sequence[Action]) -> Action:
        top = sit.discard_top
        stock = _STOCK if _STOCK in legal else legal[0]
        if _PILE not in legal or top is None:
            return stock
        if sit.opened:
            if fits_table(top, sit) or (self.open_pile and makes_extra_meld(top, sit)):
                return _PILE
            return stock if _STOCK in legal else _PILE
        if self.pile_live_gain <= 0:
            before = missing(sit.hand, sit)
            if before > 0 and missing((*sit.hand, top), sit) < before:
                return _PILE
            return stock if _STOCK in legal else _PILE
        seen = self.seen(sit)
        before, live = live_outs(sit.hand, sit, seen)
        if before > 0:
            after, live_after = live_outs((*sit.hand, top), sit, seen)
            if after < before or (after == before and live_after >= live + self.pile_live_gain):
                return _PILE
        return stock if _STOCK in legal else _PILE

    # ------------------------------------------------------------------ discards
    def _open_discard(self, sit: Situation, discards: Sequence[Discard]) -> Discard:
        return min(discards, key=self._open_key(sit))

    def _open_key(self, sit: Situation) -> Callable[[Discard], tuple[int, ...]]:
        by_id = {c.id: c for c in sit.hand}
        penalty = sit.rules.penalty

        def key(action: Discard) -> tuple[int, ...]:
            c = by_id[action.card]
            fits = 1 if self.open_fits and sit.table and fits_table(c, sit) else 0
            return (fits, -penalty(c), c.id)

        return key

    def _closed_discard(
        self, sit: Situation, discards: Sequence[Discard], seen: Counter[Kind]
    ) -> Discard:
        return best_discard(sit, discards, seen, self._closed_rank(sit))

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        free = sit.rules.draw_from_discard  # the next seat takes it without a penalty card

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            danger = 1 if self.danger and sit.table and fits_table(c, sit) else 0
            penalty = -sit.rules.penalty(c)
            if free:
                return (missing, danger, -live, penalty, c.id)
            return (missing, -live, danger, penalty, c.id)

        return rank

    def ranked_discards(self, sit: Situation, discards: Sequence[Discard]) -> list[Discard]:
        """The discards best first as this bot judges them (its choice first when it
        would discard now), one per card kind (twins play alike).  Reads its memory of
        the discards seen, never changes it."""
        by_id = {c.id: c for c in sit.hand}
        if sit.opened:
            open_key = self._open_key(sit)
            ordered = sorted(discards, key=open_key)
        else:
            seen = self.seen(sit)
            rank = self._closed_rank(sit)
            judged: dict[Kind, tuple[int, int]] = {}
            keys: dict[Discard, tuple[int, ...]] = {}
            for action in discards:
                c = by_id[action.card]
                if c.kind not in judged:
                    judged[c.kind] = live_outs(tuple(x for x in sit.hand if x is not c), sit, seen)
                keys[action] = rank(c, *judged[c.kind])
            ordered = sorted(discards, key=keys.__getitem__)
        kinds: set[Kind] = set()
        out: list[Discard] = []
        for action in ordered:
            kind = by_id[action.card].kind
            if kind not in kinds:
                kinds.add(kind)
                out.append(action)
        return out
