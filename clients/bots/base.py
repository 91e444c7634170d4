"""The bot interface and what a bot sees: its seat's :class:`Situation`.

A bot sees exactly what a seat sees through the public API, in engine types: a
:class:`Situation` (read straight from the seat's view message over the API, or built
straight from the engine state in process: the same content either way) and the legal
actions as engine :class:`~engine.actions.Action` values.  It may import ``engine`` to
think (the solver, simulations), never to act: whoever plays the seat (``clients.turn``)
submits what :meth:`Bot.choose` returns.

A new bot is a subclass with a ``name`` and a ``choose``, registered through the
``glintwick.bots`` entry-point group or named as ``module:Class``; see docs/BOTS.md.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

from engine.actions import Action
from engine.cards import Card, card
from engine.game import GameState, Phase
from engine.melds import Meld
from engine.rulesets import RuleSet
from glintwick.convert import PHASE_FROM_PB, meld_from_pb
from glintwick.v1 import game_pb2 as pb

__all__ = ["Bot", "Situation"]

_new_tuple = tuple.__new__
# each phase's plain value (an enum member's .value is a Python-level descriptor call)
_PHASE_VALUE = {p: p.value for p in Phase}


class Situation(NamedTuple):
    """What one seat knows of a game, in engine types: its view, nothing hidden.

    The first nine fields are what most decisions need; the rest complete the public
    picture (sizes, scores, counters) for bots that simulate or count cards.  Immutable;
    a named tuple rather than a frozen dataclass because one is built for every move of
    an in-process game, and a frozen dataclass takes three times as long to build."""

    rules: RuleSet
    round_number: int
    seat: int
    phase: str  # "draw" | "play" | "claim" | "game_over"
    hand: tuple[Card, ...]  # in card order
    opened: bool
    table: tuple[Meld, ...]
    discard_top: Card | None
    taken_from_discard: int | None
    seats: int = 0
    current: int = 0
    hand_sizes: tuple[int, ...] = ()
    opened_seats: tuple[bool, ...] = ()
    scores: tuple[int, ...] = ()
    discard_size: int = 0
    stock_size: int = 0
    laid_this_turn: bool = False
    exhaustions: int = 0
    turns_completed: int = 0

    @classmethod
    def from_state(cls, state: GameState, seat: int) -> Situation:
        """``seat``'s situation straight from the engine state (in-process play): the
        same as :meth:`from_pb` of the seat's view message (a test compares them along
        real games)."""
        over = state.phase is Phase.GAME_OVER
        taken = state.taken_from_discard
        # (the fields in order, built as a tuple: a step's hot path in the training
        # environment, where keywords cost a third of the call)
        return _new_tuple(
            cls,
            (
                state.rules,  # rules
                state.round_number,  # round_number
                seat,  # seat
                _PHASE_VALUE[state.phase],  # phase
                state.hands[seat],  # hand (the engine keeps hands in card order)
                state.opened[seat],  # opened
                tuple(state.table),  # table
                state.discards[-1] if state.discards else None,  # discard_top
                taken if taken is not None and not over else None,  # taken_from_discard
                state.seats,  # seats
                state.current,  # current
                tuple(map(len, state.hands)),  # hand_sizes
                tuple(state.opened),  # opened_seats
                tuple(state.scores),  # scores
                len(state.discards),  # discard_size
                len(state.stock),  # stock_size
                state.laid_this_turn,  # laid_this_turn
                state.exhaustions,  # exhaustions
                state.turns_completed,  # turns_completed
            ),
        )

    @classmethod
    def from_pb(cls, view: pb.View, rules: RuleSet) -> Situation:
        """The situation a seat's view message states (over the API), read straight
        from the message; ``rules``: the game's rule set (the view names it only).
        InvalidActionError for a card id no deck of the rule set has."""
        decks = rules.decks
        seat = view.seat
        players = view.players
        hand = [card(c.id, decks) for c in view.hand]
        hand.sort(key=_id)  # (in card order already: the engine keeps hands so)
        return cls(
            rules=rules,
            round_number=view.round,
            seat=seat,
            phase=PHASE_FROM_PB[view.phase].value,
            hand=tuple(hand),
            opened=players[seat].opened if seat < len(players) else False,
            table=tuple([meld_from_pb(m, decks) for m in view.table]),
            discard_top=(
                card(view.discard_top.id, decks) if view.HasField("discard_top") else None
            ),
            taken_from_discard=(
                card(view.taken_from_discard.id, decks).id
                if view.HasField("taken_from_discard")
                else None
            ),
            seats=view.seats,
            current=view.current,
            hand_sizes=tuple([p.hand_size for p in players]),
            opened_seats=tuple([p.opened for p in players]),
            scores=tuple([p.score for p in players]),
            discard_size=view.discard_size,
            stock_size=view.stock_size,
            laid_this_turn=view.laid_this_turn,
            exhaustions=view.exhaustions,
            turns_completed=view.turns_completed,
        )


class Bot(ABC):
    """One seat's player.  ``seed`` makes every choice reproducible."""

    name: str = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rules: RuleSet | None = None
        self.seat: int | None = None

    def setup(self, rules: RuleSet, seat: int) -> None:
        """Called once before the game: the rule set (custom ones included) and the seat."""
        self.rules = rules
        self.seat = seat

    @abstractmethod
    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        """One of ``legal`` (never empty) for the seat whose situation this is."""


def _id(c: Card) -> int:
    return c.id
