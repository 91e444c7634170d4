"""Positions for the game's scenario tests (tests/unit/test_game_rules.py, test_game_rounds.py).

Positions are built with :func:`build`: card codes name physical cards in order of
appearance (hands seat by seat, then table melds, discard pile bottom to top, stock
top to bottom), so the first ``7H`` named is deck 0's and the second deck 1's.
Every card not named goes to the bottom of the stock (``rest="stock"``), under the
discard pile (``rest="discards"``) or into a seat's hand (``rest=seat``).  The state
then goes through ``GameState.from_dict``, so it is a complete, validated position.
Whole games start from ``GameState.new_game(..., stock_orders={round: order})`` with
``order`` from :func:`engine.game.arrange_deck`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engine.actions import (
    Action,
    Draw,
    DrawSource,
)
from engine.cards import Card, cards_from_codes, full_deck
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import Event, EventType
from engine.game import GameState, Phase
from engine.melds import build_meld
from engine.rulesets import (
    CONTRACT,
    WHISKERTRAIL,
    MeldKind,
    MeldRequirement,
    RuleSet,
)

W = WHISKERTRAIL
C = CONTRACT
SET = MeldKind.SET
RUN = MeldKind.RUN
STOCK = Draw(DrawSource.STOCK)
PILE = Draw(DrawSource.DISCARD)
SEED = b"scenario"
R5 = MeldRequirement(RUN, 5)

TableEntry = tuple[int, str, Sequence[str]] | tuple[int, str, Sequence[str], int]


# ---------------------------------------------------------------------------- helpers


def build(
    rules: RuleSet,
    hands: Sequence[Sequence[str]],
    *,
    stock: Sequence[str] = (),
    discards: Sequence[str] = (),
    table: Sequence[TableEntry] = (),
    phase: Phase = Phase.PLAY,
    current: int = 0,
    round_number: int = 1,
    opened: Sequence[bool] | None = None,
    rest: str | int = "stock",
    taken: str | None = None,
    laid_this_turn: bool = False,
    exhaustions: int = 0,
    epoch: int = 0,
    turns_completed: int = 0,
    scores: Sequence[int] | None = None,
) -> GameState:
    """A complete position (see the module docstring)."""
    seats = len(hands)
    named = [code for h in hands for code in h]
    named += [code for entry in table for code in entry[2]]
    named += list(discards) + list(stock)
    chosen = iter(cards_from_codes(named, rules.decks, rules.jokers))
    hand_cards = [[next(chosen) for _ in h] for h in hands]
    melds = []
    for entry in table:
        owner, kind, codes = entry[0], entry[1], entry[2]
        start = entry[3] if len(entry) == 4 else None
        cards = [next(chosen) for _ in codes]
        melds.append(build_meld(MeldKind(kind), cards, rules, None, start).with_owner(owner))
    pile = [next(chosen) for _ in discards]
    stk = [next(chosen) for _ in stock]
    used = {c.id for h in hand_cards for c in h} | {c.id for m in melds for c in m.cards}
    used |= {c.id for c in pile} | {c.id for c in stk}
    free = [c for c in full_deck(rules.decks, rules.jokers) if c.id not in used]
    if rest == "stock":
        stk += free
    elif rest == "discards":
        pile = free + pile
    else:
        assert isinstance(rest, int)
        hand_cards[rest] += free
    if opened is None:
        opened = [any(m.owner == s for m in melds) for s in range(seats)]
    taken_id = None
    if taken is not None:
        taken_id = next(c.id for c in hand_cards[current] if c.code == taken)
    state = GameState(
        rules=rules,
        seats=seats,
        seed=SEED,
        round_number=round_number,
        phase=phase,
        current=current,
        hands=tuple(tuple(sorted(h)) for h in hand_cards),
        stock=tuple(stk),
        discards=tuple(pile),
        table=tuple(melds),
        opened=tuple(opened),
        scores=tuple(scores) if scores is not None else (0,) * seats,
        taken_from_discard=taken_id,
        laid_this_turn=laid_this_turn,
        claim_answers=(None,) * seats if phase is Phase.CLAIM else (),
        exhaustions=exhaustions,
        epoch=epoch,
        turns_completed=turns_completed,
    )
    return GameState.from_dict(state.to_dict())


def cid(state: GameState, seat: int, code: str, nth: int = 0) -> int:
    """The id of the ``nth`` card with this code in a seat's hand (by id order)."""
    return [c.id for c in state.hands[seat] if c.code == code][nth]


def codes(cards: Sequence[Card]) -> list[str]:
    return sorted(c.code for c in cards)


def meld_codes(state: GameState) -> list[list[str]]:
    return [[c.code for c in m.cards] for m in state.table]


def types_of(events: Sequence[Event]) -> list[str]:
    return [str(e.type) for e in events]


def event(events: Sequence[Event], kind: EventType) -> Event:
    found = [e for e in events if e.type == kind]
    assert len(found) == 1, f"{kind}: {types_of(events)}"
    return found[0]


def play(state: GameState, seat: int, action: Action, *, listed: bool = True) -> GameState:
    """Apply an action that must be legal (and, by default, listed by legal_actions)."""
    if listed:
        assert action in state.legal_actions(seat), (action, state.legal_actions(seat))
    state.check(seat, action)
    return state.apply_action(seat, action)[0]


def play_events(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    state.check(seat, action)
    return state.apply_action(seat, action)


def expect_illegal(state: GameState, seat: int, action: Action, reason: Reason) -> None:
    """Refused with ``reason`` by apply_action and check, not listed, state unchanged."""
    before = state.to_dict()
    with pytest.raises(IllegalActionError) as info:
        state.apply_action(seat, action)
    assert info.value.reason is reason, info.value
    with pytest.raises(IllegalActionError) as again:
        state.check(seat, action)
    assert again.value.reason is reason
    assert action not in state.legal_actions(seat)
    assert state.to_dict() == before
    assert GameState.from_dict(before) == state


def expect_invalid(state: GameState, seat: Any, action: Any) -> None:
    before = state.to_dict()
    with pytest.raises(InvalidActionError):
        state.apply_action(seat, action)
    with pytest.raises(InvalidActionError):
        state.check(seat, action)
    assert state.to_dict() == before


def penalty(rules: RuleSet, hand_codes: Sequence[str]) -> int:
    return sum(rules.penalty(c) for c in cards_from_codes(hand_codes, rules.decks, rules.jokers))


C_OTHERS = (["2D", "3D"], ["4S", "5S"], ["6C", "7C"])


def cstate(seat0: Sequence[str], **kw: Any) -> GameState:
    """A 4-seat ``contract`` position; seats 1..3 hold small filler hands."""
    hands = kw.pop("hands", None) or [list(seat0), *map(list, C_OTHERS)]
    return build(C, hands, **kw)


def wstate(seat0: Sequence[str], seat1: Sequence[str] = ("2D", "3D"), **kw: Any) -> GameState:
    """A 2-seat ``whiskertrail`` position."""
    return build(W, [list(seat0), list(seat1)], **kw)
