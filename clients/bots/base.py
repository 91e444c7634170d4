"""The bot interface, the bot registry and what every bot needs to read a view.

A bot sees exactly what a seat sees through the public API: the engine-style seat
view (``glintwick.convert.view_from_pb``, or ``engine.views.seat_view`` in process,
the same dict) and the legal actions as engine :class:`~engine.actions.Action`
values.  It may import ``engine`` to think (the solver, simulations), never to act:
the runner (``clients/botrunner.py`` over gRPC, or the tournament's in-process
runner) submits what :meth:`Bot.choose` returns.

A new bot is a subclass with a ``name`` and a ``choose``, registered with
:func:`register`; see docs/BOTS.md.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.actions import Action
from engine.cards import SUITS, Card, card
from engine.melds import Meld
from engine.rulesets import MeldKind, RuleSet, ruleset

__all__ = ["BOTS", "Bot", "Situation", "make_bot", "register"]


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

    def rules_for(self, view: Mapping[str, Any]) -> RuleSet:
        """The rule set: the one given to :meth:`setup`, else the preset the view names."""
        if self.rules is None or self.rules.hash != view.get("rules_hash", self.rules.hash):
            self.rules = ruleset(str(view["rules"]))
        return self.rules

    @abstractmethod
    def choose(
        self, view: Mapping[str, Any], legal: Sequence[Action], rng: random.Random
    ) -> Action:
        """One of ``legal`` (never empty) for the seat whose view this is."""


BOTS: dict[str, type[Bot]] = {}
B = TypeVar("B", bound=type[Bot])


def register(cls: B) -> B:
    """Class decorator: make the bot available by its ``name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a name")
    BOTS[cls.name] = cls
    return cls


def make_bot(name: str, seed: int = 0) -> Bot:
    """A fresh bot of the registered kind ``name``."""
    import clients.bots  # noqa: F401  - registers the built-in bots

    try:
        return BOTS[name](seed)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known: {', '.join(sorted(BOTS))}") from None


# --------------------------------------------------------------------------- reading views


def _card(data: Mapping[str, Any] | None, decks: int) -> Card | None:
    if not data or "id" not in data:
        return None
    return card(int(data["id"]), decks)


def meld_from_json(data: Mapping[str, Any], decks: int) -> Meld:
    suit = data.get("suit") or ""
    return Meld(
        MeldKind(str(data["kind"])),
        tuple(card(int(c["id"]), decks) for c in data.get("cards", [])),
        int(data.get("rank", 0)),
        SUITS.index(suit) if suit else -1,
        int(data.get("owner", -1)),
    )


@dataclass(frozen=True, slots=True)
class Situation:
    """What a bot's decision needs, in engine types, from a view or from a state."""

    rules: RuleSet
    round_number: int
    seat: int
    phase: str  # "draw" | "play" | "claim" | "game_over"
    hand: tuple[Card, ...]
    opened: bool
    table: tuple[Meld, ...]
    discard_top: Card | None
    taken_from_discard: int | None

    @classmethod
    def from_view(cls, view: Mapping[str, Any], rules: RuleSet) -> Situation:
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
            hand=tuple(sorted(card(int(c["id"]), decks) for c in view.get("hand", []))),
            opened=opened,
            table=tuple(meld_from_json(m, decks) for m in view.get("table", [])),
            discard_top=_card(view.get("discard_top"), decks),
            taken_from_discard=taken.id if taken is not None else None,
        )


Chooser = Callable[[Mapping[str, Any], Sequence[Action], random.Random], Action]
