"""Open-hand discards by the chance to go out next turn (a variant of ``expert``).

Once open, ``expert`` keeps a card that lays off and otherwise sheds the costliest card:
what it keeps is its cheapest cards, whatever their chance of ever leaving the hand.
``OutsBot`` counts, for each discard, the unseen cards whose draw would let the hand go
out on the next turn with the table as it is (lay-offs, chained along a run's end, and
extra melds where the rules allow them), and scores the discard by the penalty kept
minus ``weight`` points per such live card.  Measured in docs/BOT_STUDIES.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from clients.bots.base import Situation
from clients.bots.closer import CloserBot
from clients.bots.strong import Kind
from engine.actions import Action, Discard, Draw, DrawSource
from engine.cards import JOKER_RANK, Card, card
from engine.game.moves import canonical_extra_melds
from engine.melds import Meld, build_meld, lay_off, layoff_ends
from engine.rulesets import RuleSet

__all__ = ["ClosedLowBot", "OutsBot", "can_go_out"]


def _shed(hand: list[Card], table: list[Meld], rules: RuleSet) -> list[Card]:
    """The hand left after laying off whatever fits, again and again (a run's new end
    lets the next card on): a greedy fixpoint."""
    hand = list(hand)
    changed = True
    while changed and hand:
        changed = False
        for c in hand:
            for i, m in enumerate(table):
                ends = layoff_ends(m, c, rules)
                if ends:
                    table[i] = lay_off(m, c, rules, ends[0])
                    hand.remove(c)
                    changed = True
                    break
            if changed:
                break
    return hand


def can_go_out(hand: Sequence[Card], table: Sequence[Meld], rules: RuleSet) -> bool:
    """Whether ``hand`` (after the draw) can go out this turn: lay off and meld all but at
    most one card (the discard)."""
    if len(hand) <= 1:
        return True
    left = _shed(list(hand), list(table), rules)
    if len(left) <= 1:
        return True
    if rules.extra_melds:
        for kind, cards in canonical_extra_melds(left, rules):
            meld = build_meld(kind, cards, rules)
            rest = [c for c in left if c not in cards]
            if len(_shed(rest, [*table, meld], rules)) <= 1:
                return True
    return False


def _stand_ins(rules: RuleSet, hand: Sequence[Card]) -> list[Card]:
    """One card of each kind (a copy not in ``hand``), and a joker if the rules have any."""
    held = {c.id for c in hand}
    out: list[Card] = []
    for i in range(52):
        ids = [i + 52 * d for d in range(rules.decks)]
        free = next((x for x in ids if x not in held), None)
        if free is not None:
            out.append(card(free, rules.decks))
    jokers = [rules.decks * 52 + j for j in range(rules.jokers)]
    free = next((x for x in jokers if x not in held), None)
    if free is not None:
        out.append(card(free, rules.decks))
    return out


def _near(x: Card, hand: Sequence[Card]) -> bool:
    """Whether ``x`` could meld with a card of ``hand`` (same rank; same suit, close)."""
    if x.rank == JOKER_RANK:
        return True
    return any(
        c.rank == JOKER_RANK or c.rank == x.rank or (c.suit == x.suit and abs(c.rank - x.rank) <= 4)
        for c in hand
    )


class OutsBot(CloserBot):
    name = "outs"
    min_seats = 99  # (measured on closer before it took racer's rule)

    weight: float = 1.0  # penalty points a live card that lets the hand go out is worth
    most_cards: int = 6  # judge only hands this small (after the draw)

    def _open_discard(self, sit: Situation, discards: Sequence[Discard]) -> Discard:
        if len(sit.hand) > self.most_cards:
            return super()._open_discard(sit, discards)
        return min(discards, key=self._outs_key(sit, self._open_key(sit)))

    def _outs_key(
        self, sit: Situation, expert_key: Callable[[Discard], tuple[int, ...]]
    ) -> Callable[[Discard], tuple[float, ...]]:
        rules = sit.rules
        seen: Counter[Kind] = self.seen(sit)
        table = sit.table
        stand_ins = _stand_ins(rules, sit.hand)
        live = {
            x.kind: (rules.jokers if x.rank == JOKER_RANK else rules.decks) - seen[x.kind]
            for x in stand_ins
        }
        every = sum(max(0, n) for n in live.values())
        fits = {x.kind for x in stand_ins if any(layoff_ends(m, x, rules) for m in table)}
        by_id = {c.id: c for c in sit.hand}
        memo: dict[Kind, int] = {}

        def outs(d: Card) -> int:
            if d.kind in memo:
                return memo[d.kind]
            rest = [c for c in sit.hand if c is not d]
            if not _shed(rest, list(table), rules):
                total = every  # the hand sheds whole: any draw is the last discard
            else:
                total = 0
                for x in stand_ins:
                    n = live[x.kind]
                    relevant = x.kind in fits or _near(x, rest)
                    if n > 0 and relevant and can_go_out([*rest, x], table, rules):
                        total += n
            memo[d.kind] = total
            return total

        held = sum(rules.penalty(c) for c in sit.hand)

        def key(action: Discard) -> tuple[float, ...]:
            d = by_id[action.card]
            first, *others = expert_key(action)
            kept = held - rules.penalty(d)
            return (first, kept - self.weight * outs(d), *others)

        return key


class OutsBot3(OutsBot):
    name = "outs3"
    weight = 3.0


class OutsBotLex(OutsBot):
    name = "outslex"
    weight = 1000.0


class ClosedLowBot(CloserBot):
    """Closed while an opponent is open (whiskertrail's race): take the pile's top
    instead of the stock when it is a card of at most ``low`` points and the costliest
    card held is at least ``gap`` points dearer (a known cheap card, not a random one)."""

    name = "closedlow"
    min_seats = 99  # (measured on closer before it took racer's rule)
    low: int = 3
    gap: int = 7

    def _draw(self, sit: Situation, legal: Sequence[Action]) -> Action:
        top = sit.discard_top
        pile, stock = Draw(DrawSource.DISCARD), Draw(DrawSource.STOCK)
        race = any(o for s, o in enumerate(sit.opened_seats) if s != sit.seat)
        if not sit.opened and race and top is not None and pile in legal and stock in legal:
            penalty = sit.rules.penalty
            cheap = not top.is_joker and penalty(top) <= self.low
            if cheap and sit.hand and penalty(top) + self.gap <= max(map(penalty, sit.hand)):
                return pile
        return super()._draw(sit, legal)
