"""The May I? window: when it opens, who answers in which order, who wins, what it costs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from engine.actions import Action, Claim, PassClaim
from engine.cards import Card, card_json, cards_json
from engine.errors import IllegalActionError, Reason
from engine.events import Event, EventType
from engine.game.hands import hand_with
from engine.game.phase import CLAIM_PHASE, DRAW_PHASE, GAME_OVER
from engine.rulesets import MAX_SEATS, RuleSet

if TYPE_CHECKING:
    from engine.game.state import GameState, Result

# Enum members as module constants: Python 3.11 reads ``Enum.MEMBER`` through
# EnumType's ``__getattr__`` hook, ten times the cost of a global (the hot path).
_CLAIM_ANSWERED: Final = EventType.CLAIM_ANSWERED
_CLAIM_AWARDED: Final = EventType.CLAIM_AWARDED
_CLAIM_WINDOW_CLOSED: Final = EventType.CLAIM_WINDOW_CLOSED
_CLAIM_WINDOW_OPENED: Final = EventType.CLAIM_WINDOW_OPENED
_TURN_STARTED: Final = EventType.TURN_STARTED

_CLAIM = Claim()
_PASS = PassClaim()


def opens(rules: RuleSet, discarded: bool) -> bool:
    """Whether a completed turn opens a window: one ended by a discard, in a rule set with
    May I?  (A discard that empties the hand or settles a stalemate ends the round first.)"""
    return rules.may_i and discarded


def discarder(state: GameState) -> int:
    """The seat whose discard is open to claims (``current`` is already the next seat)."""
    return (state.current - 1) % state.seats


def priority(seats: int, discarder: int) -> list[int]:
    """Who answers, best claim first: every other seat, in turn order after the discarder."""
    return list(_ORDERS[seats][discarder])


#: :func:`priority` of every game size and discarder, as tuples (read, never handed out)
_ORDERS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple((by + k) % seats for k in range(1, seats)) for by in range(seats))
    for seats in range(MAX_SEATS + 1)
)


def waiting(state: GameState) -> tuple[int, ...]:
    """The seats yet to answer, by priority (answers may come in any order)."""
    answers = state.claim_answers
    order = _ORDERS[state.seats][(state.current - 1) % state.seats]
    return tuple([s for s in order if answers[s] is None])


def answered(state: GameState) -> int:
    """How many seats have answered the open window (each answer is one action: the
    window opened that many actions ago); 0 outside a window."""
    return sum(1 for answer in state.claim_answers if answer is not None)


def legal_answers(state: GameState, seat: int) -> list[Action]:
    """``Claim`` (while the stock can pay its penalty) and ``PassClaim``, for a seat that
    has yet to answer; nothing for the discarder or a seat that answered."""
    if seat == discarder(state) or state.claim_answers[seat] is not None:
        return []
    return [_CLAIM, _PASS] if state.stock else [_PASS]


def open_window(
    state: GameState,
    seat: int,
    events: list[Event],
    *,
    hands: tuple[tuple[Card, ...], ...],
    discards: tuple[Card, ...],
    turns_completed: int,
) -> Result:
    """``state`` after ``seat`` ended its turn with a discard that opens a window."""
    n = state.seats
    events.append(
        Event(
            _CLAIM_WINDOW_OPENED,
            seat,
            {"card": card_json(discards[-1]), "seats": priority(n, seat)},
        )
    )
    nxt = state.evolve(
        phase=CLAIM_PHASE,
        current=(seat + 1) % n,
        hands=hands,
        discards=discards,
        claim_answers=(None,) * n,
        taken_from_discard=None,
        laid_this_turn=False,
        turns_completed=turns_completed,
        action_count=state.action_count + 1,
    )
    return nxt, events


def answer(state: GameState, seat: int, action: Claim | PassClaim) -> Result:
    """``seat`` claims or passes; the last answer closes the window: the first claimant by
    priority takes the discard plus ``claim_penalty_cards`` from the top of the stock (as
    many as there are), then the seat after the discarder starts its turn."""
    claim = isinstance(action, Claim)
    phase = state.phase
    if phase is GAME_OVER:
        raise IllegalActionError(Reason.GAME_OVER, "the game is over")
    if phase is not CLAIM_PHASE:
        raise IllegalActionError(Reason.NO_CLAIM_WINDOW, "no discard is open to claims")
    by = discarder(state)
    if seat == by:
        raise IllegalActionError(Reason.OWN_DISCARD, "you cannot claim your own discard")
    if state.claim_answers[seat] is not None:
        raise IllegalActionError(Reason.ALREADY_ANSWERED, "you already answered this claim window")
    if claim and not state.stock:
        raise IllegalActionError(Reason.CLAIM_STOCK_EMPTY, "no claims while the stock is empty")
    answers = list(state.claim_answers)
    answers[seat] = claim
    events = [Event(_CLAIM_ANSWERED, seat, {"claim": claim})]
    order = _ORDERS[state.seats][by]
    if None in [answers[s] for s in order]:
        nxt = state.evolve(claim_answers=tuple(answers), action_count=state.action_count + 1)
        return nxt, events
    claimants = [s for s in order if answers[s]]
    top = state.discards[-1]
    hands = state.hands
    stock = state.stock
    discards = state.discards
    winner: int | None = None
    if claimants:
        winner = claimants[0]
        take = min(state.rules.claim_penalty_cards, len(stock))
        penalty = stock[:take]
        stock = stock[take:]
        discards = discards[:-1]
        new_hands = list(hands)
        new_hands[winner] = hand_with(hands[winner], top, *penalty)
        hands = tuple(new_hands)
        events.append(
            Event(
                _CLAIM_AWARDED,
                winner,
                {"card": card_json(top), "penalty_cards": take},
                {winner: {"penalty": cards_json(penalty)}},
            )
        )
    events.append(
        Event(
            _CLAIM_WINDOW_CLOSED,
            by,
            {"card": card_json(top), "winner": winner, "claimants": claimants},
        )
    )
    events.append(Event(_TURN_STARTED, state.current, {"round": state.round_number}))
    nxt = state.evolve(
        phase=DRAW_PHASE,
        hands=hands,
        stock=stock,
        discards=discards,
        claim_answers=(),
        action_count=state.action_count + 1,
    )
    return nxt, events


def view(state: GameState) -> dict[str, Any] | None:
    """The open window as every viewer sees it (answers are public as they come)."""
    if state.phase is not CLAIM_PHASE:
        return None
    by = discarder(state)
    return {
        "card": card_json(state.discards[-1]),
        "discarder": by,
        "answers": [
            {"seat": s, "answer": _answer_name(state.claim_answers[s])}
            for s in priority(state.seats, by)
        ],
    }


def _answer_name(value: bool | None) -> str | None:
    if value is None:
        return None
    return "claim" if value else "pass"
