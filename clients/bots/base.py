"""The bot interface and what a bot sees: its seat's :class:`Situation`.

A bot sees exactly what a seat sees through the public API, in engine types: a
:class:`Situation` (read from the seat's view over the API, or built straight from the
engine state in process: the same content either way) and the legal actions as engine
:class:`~engine.actions.Action` values.  It may import ``engine`` to think (the solver,
simulations), never to act: whoever plays the seat (``clients.turn``) submits what
:meth:`Bot.choose` returns.

A new bot is a subclass with a ``name`` and a ``choose``, registered through the
``glintwick.bots`` entry-point group or named as ``module:Class``; see docs/BOTS.md.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from engine.actions import Action
from engine.cards import Card, card
from engine.game import GameState, Phase
from engine.melds import Meld, meld_from_json
from engine.rulesets import RuleSet

__all__ = ["Bot", "Situation"]


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
        same as :meth:`from_view` of ``engine.views.seat_view(state, seat)``."""
        over = state.phase is Phase.GAME_OVER
        taken = state.taken_from_discard
        return cls(
            rules=state.rules,
            round_number=state.round_number,
            seat=seat,
            phase=state.phase.value,
            hand=state.hands[seat],  # the engine keeps hands in card order
            opened=state.opened[seat],
            table=tuple(state.table),
            discard_top=state.discards[-1] if state.discards else None,
            taken_from_discard=taken if taken is not None and not over else None,
            seats=state.seats,
            current=state.current,
            hand_sizes=tuple(len(h) for h in state.hands),
            opened_seats=tuple(state.opened),
            scores=tuple(state.scores),
            discard_size=len(state.discards),
            stock_size=len(state.stock),
            laid_this_turn=state.laid_this_turn,
            exhaustions=state.exhaustions,
            turns_completed=state.turns_completed,
        )

    @classmethod
    def from_view(cls, view: Mapping[str, Any], rules: RuleSet) -> Situation:
        """The situation a seat view states (``glintwick.convert.view_from_pb`` of an
        API view, or ``engine.views.seat_view``)."""
        decks = rules.decks
        seat = int(view.get("seat", 0))
        players = view.get("players", [])
        opened = bool(players[seat].get("opened", False)) if seat < len(players) else False
        taken = _card(view.get("taken_from_discard"), decks)
        return cls(
            rules=rules,
            round_number=int(view["round"]),
            seat=seat,
            phase=str(view.get("phase", "")),
            hand=tuple(sorted((card(int(c["id"]), decks) for c in view.get("hand", [])), key=_id)),
            opened=opened,
            table=tuple(meld_from_json(m, decks) for m in view.get("table", [])),
            discard_top=_card(view.get("discard_top"), decks),
            taken_from_discard=taken.id if taken is not None else None,
            seats=int(view.get("seats", len(players))),
            current=int(view.get("current", 0)),
            hand_sizes=tuple(int(p.get("hand_size", 0)) for p in players),
            opened_seats=tuple(bool(p.get("opened", False)) for p in players),
            scores=tuple(int(p.get("score", 0)) for p in players),
            discard_size=int(view.get("discard_size", 0)),
            stock_size=int(view.get("stock_size", 0)),
            laid_this_turn=bool(view.get("laid_this_turn", False)),
            exhaustions=int(view.get("exhaustions", 0)),
            turns_completed=int(view.get("turns_completed", 0)),
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


# --------------------------------------------------------------------------- reading views


def _id(c: Card) -> int:
    return c.id


def _card(data: Mapping[str, Any] | None, decks: int) -> Card | None:
    if not data or "id" not in data:
        return None
    return card(int(data["id"]), decks)
