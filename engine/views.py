"""What one seat (or a spectator) may see of a game.

A seat sees its own hand, the table, the discard pile's top card and size, the
stock's size, every player's hand size, opened flag and score, whose turn it is,
the claim window (the card and the answers so far, which are public) and the card
the current seat took from the discard pile this turn (everyone saw it taken).
Never another hand, the stock's order or the seed while the game runs; once the
game is over the seed is shown so the round commitments can be checked.

A view is a typed value (:class:`PublicView`, :class:`SeatView`) holding engine
values (cards, melds, the contract); its plain form (``to_dict``, what
:func:`seat_view` and :func:`spectator_view` return) renders cards as
``{"id": int, "code": "7H"}`` and melds as in :func:`engine.melds.meld_json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine.cards import Card, card, card_json, cards_json, field_values
from engine.events import contract_json
from engine.game import GameState, Phase, claims
from engine.melds import Meld, meld_json
from engine.rulesets import Contract, RuleSet
from engine.shuffle import commitment, round_seed

__all__ = [
    "ClaimAnswer",
    "ClaimWindow",
    "PlayerInfo",
    "PublicView",
    "SeatView",
    "build_seat_view",
    "build_spectator_view",
    "seat_view",
    "spectator_view",
]

_ANSWER_NAMES: dict[bool | None, str | None] = {None: None, True: "claim", False: "pass"}


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """What everyone sees of one seat."""

    seat: int
    hand_size: int
    opened: bool
    score: int  # cumulative

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "hand_size": self.hand_size,
            "opened": self.opened,
            "score": self.score,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


@dataclass(frozen=True, slots=True)
class ClaimAnswer:
    """One seat's answer to an open claim window (answers are public as they come)."""

    seat: int
    answer: bool | None  # True: claims, False: passes, None: not answered yet

    @property
    def answer_name(self) -> str | None:
        """``"claim"``, ``"pass"``, or None before the seat answers."""
        return _ANSWER_NAMES[self.answer]

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "answer": _ANSWER_NAMES[self.answer]}

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


@dataclass(frozen=True, slots=True)
class ClaimWindow:
    """The open claim window: the discard on offer and the answers, by priority."""

    card: Card
    discarder: int
    answers: tuple[ClaimAnswer, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": card_json(self.card),
            "discarder": self.discarder,
            "answers": [a.to_dict() for a in self.answers],
        }

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


@dataclass(frozen=True, slots=True)
class PublicView:
    """What everyone sees of a game: a spectator's view, and the part of every seat's."""

    rules: RuleSet
    seats: int
    round: int
    phase: Phase
    current: int
    to_act: tuple[int, ...]
    players: tuple[PlayerInfo, ...]
    table: tuple[Meld, ...]  # index = the meld's place (what LayOff and SwapJoker name)
    discard_top: Card | None
    discard_size: int
    stock_size: int
    taken_from_discard: Card | None  # by the current seat this turn (None once over)
    laid_this_turn: bool
    claim: ClaimWindow | None
    exhaustions: int
    turns_completed: int
    action_count: int
    # the current round's seed commitment: a watcher who joins after the deal
    # (or the first deal, made before anyone watches) still gets it
    commitment: str
    winners: tuple[int, ...] | None  # once the game is over
    seed: str | None  # hex, once the game is over
    abandoned: bool  # the game ended abandoned (GameState.abandon): over, no winners

    @property
    def game_over(self) -> bool:
        return self.phase is Phase.GAME_OVER

    @property
    def contract(self) -> Contract:
        """The current round's contract."""
        return self.rules.contracts[self.round - 1]

    def to_dict(self) -> dict[str, Any]:
        """The plain form (JSON-shaped) that :func:`spectator_view` returns."""
        taken = self.taken_from_discard
        claim = self.claim
        top = self.discard_top
        winners = self.winners
        view: dict[str, Any] = {
            "rules": self.rules.name,
            "rules_hash": self.rules.hash,
            "seats": self.seats,
            "round": self.round,
            "rounds": self.rules.rounds,
            "contract": contract_json(self.rules.contracts[self.round - 1]),
            "phase": self.phase.value,
            "current": self.current,
            "to_act": list(self.to_act),
            "players": [p.to_dict() for p in self.players],
            "table": [meld_json(m, i) for i, m in enumerate(self.table)],
            "discard_top": card_json(top) if top is not None else None,
            "discard_size": self.discard_size,
            "stock_size": self.stock_size,
            "taken_from_discard": card_json(taken) if taken is not None else None,
            "laid_this_turn": self.laid_this_turn,
            "claim": claim.to_dict() if claim is not None else None,
            "exhaustions": self.exhaustions,
            "turns_completed": self.turns_completed,
            "turn_cap": self.rules.turn_cap,
            "action_count": self.action_count,
            "game_over": self.phase is Phase.GAME_OVER,
            "commitment": self.commitment,
            "winners": list(winners) if winners is not None else None,
        }
        if self.seed is not None:
            view["seed"] = self.seed
        view["abandoned"] = self.abandoned
        return view

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


@dataclass(frozen=True, slots=True)
class SeatView(PublicView):
    """What one seat sees: the public view plus its own hand."""

    seat: int
    hand: tuple[Card, ...]  # in card order
    may_act: bool
    has_drawn: bool  # PLAY and this seat's turn: it drew this turn

    def to_dict(self) -> dict[str, Any]:
        """The plain form (JSON-shaped) that :func:`seat_view` returns."""
        view = PublicView.to_dict(self)
        view["seat"] = self.seat
        view["hand"] = cards_json(self.hand)
        view["may_act"] = self.may_act
        view["has_drawn"] = self.has_drawn
        return view


def _claim_window(state: GameState) -> ClaimWindow | None:
    if state.phase is not Phase.CLAIM:
        return None
    by = claims.discarder(state)
    answers = state.claim_answers
    return ClaimWindow(
        state.discards[-1],
        by,
        tuple(ClaimAnswer(s, answers[s]) for s in claims.priority(state.seats, by)),
    )


@lru_cache(maxsize=4096)
def _commitment(seed: bytes, round_number: int) -> str:
    """A round's commitment, the same for every view of the round (two SHA-256s
    a view otherwise: a Play move builds one)."""
    return commitment(round_seed(seed, round_number))


def _public_fields(state: GameState) -> dict[str, Any]:
    """:class:`PublicView`'s fields (shared by both views' constructors)."""
    rules = state.rules
    over = state.phase is Phase.GAME_OVER
    taken = state.taken_from_discard
    hands = state.hands
    opened = state.opened
    scores = state.scores
    discards = state.discards
    return {
        "rules": rules,
        "seats": state.seats,
        "round": state.round_number,
        "phase": state.phase,
        "current": state.current,
        "to_act": tuple(state.to_act),
        "players": tuple(
            PlayerInfo(s, len(hands[s]), opened[s], scores[s]) for s in range(state.seats)
        ),
        "table": state.table,
        "discard_top": discards[-1] if discards else None,
        "discard_size": len(discards),
        "stock_size": len(state.stock),
        "taken_from_discard": (
            card(taken, rules.decks) if taken is not None and not over else None
        ),
        "laid_this_turn": state.laid_this_turn,
        "claim": _claim_window(state),
        "exhaustions": state.exhaustions,
        "turns_completed": state.turns_completed,
        "action_count": state.action_count,
        "commitment": _commitment(state.seed, state.round_number),
        "winners": state.winners() if over else None,
        "seed": state.seed.hex() if over else None,
        "abandoned": state.abandoned,
    }


def build_spectator_view(state: GameState) -> PublicView:
    """What a spectator may see: no hand at all."""
    return PublicView(**_public_fields(state))


def build_seat_view(state: GameState, seat: object) -> SeatView:
    """What ``seat`` may see: the public view plus its own hand."""
    index = state.check_seat(seat)
    return SeatView(
        **_public_fields(state),
        seat=index,
        hand=state.hands[index],
        may_act=index in state.to_act,
        has_drawn=state.phase is Phase.PLAY and state.current == index,
    )


def seat_view(state: GameState, seat: object) -> dict[str, Any]:
    """:func:`build_seat_view`'s plain form."""
    return build_seat_view(state, seat).to_dict()


def spectator_view(state: GameState) -> dict[str, Any]:
    """:func:`build_spectator_view`'s plain form."""
    return build_spectator_view(state).to_dict()
