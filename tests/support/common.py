"""Small helpers the checks share, and the failure a playout reports."""

from __future__ import annotations

import json
from collections.abc import Iterable

from engine.actions import (
    Action,
    Discard,
    ExtraMeld,
    LayContract,
    LayOff,
    SwapJoker,
    action_to_dict,
)
from engine.cards import Card
from engine.game import GameState
from engine.rulesets import RuleSet

# --------------------------------------------------------------------------- helpers


class PlayoutFailure(AssertionError):
    """An invariant broke (or the engine raised) during a random playout."""


def card_ids(cards: Iterable[Card]) -> list[int]:
    return [c.id for c in cards]


def table_cards(state: GameState) -> list[Card]:
    return [c for m in state.table for c in m.cards]


def card_places(state: GameState) -> list[Card]:
    """Every card in every place the state names, computed independently of all_cards()."""
    cards: list[Card] = [c for hand in state.hands for c in hand]
    cards.extend(state.stock)
    cards.extend(state.discards)
    cards.extend(table_cards(state))
    return cards


def penalty_of(rules: RuleSet, cards: Iterable[Card]) -> int:
    return sum(rules.penalty(c) for c in cards)


def action_card_ids(action: Action) -> list[int]:
    """Card ids an action names publicly (they go to the table or the discard pile)."""
    match action:
        case Discard(card=c) | LayOff(card=c) | SwapJoker(card=c):
            return [c]
        case ExtraMeld(meld=spec):
            return list(spec.cards)
        case LayContract(melds=melds) if melds is not None:
            return [c for spec in melds for c in spec.cards]
    return []


def action_text(action: Action) -> str:
    return json.dumps(action_to_dict(action), sort_keys=True)
