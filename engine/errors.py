"""The engine's exceptions.

Two kinds, as in python-chess: an *invalid* action is malformed (it could never
be legal: an unknown card id, a meld with no cards, a seat that does not exist);
an *illegal* action is well-formed but a rule forbids it now, and carries a
machine-readable :class:`Reason`.  Either way the state is left unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Reason(StrEnum):
    """Machine-readable reasons a well-formed action is refused (stable API codes)."""

    GAME_OVER = "GAME_OVER"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    MUST_DRAW_FIRST = "MUST_DRAW_FIRST"
    ALREADY_DREW = "ALREADY_DREW"
    STOCK_EMPTY = "STOCK_EMPTY"
    DISCARD_PILE_EMPTY = "DISCARD_PILE_EMPTY"
    DISCARD_DRAW_NOT_ALLOWED = "DISCARD_DRAW_NOT_ALLOWED"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    NOT_OPEN = "NOT_OPEN"
    ALREADY_OPEN = "ALREADY_OPEN"
    CONTRACT_NOT_AVAILABLE = "CONTRACT_NOT_AVAILABLE"
    EXPLICIT_SELECTION_NOT_ALLOWED = "EXPLICIT_SELECTION_NOT_ALLOWED"
    SELECTION_DOES_NOT_MATCH_CONTRACT = "SELECTION_DOES_NOT_MATCH_CONTRACT"
    INVALID_MELD = "INVALID_MELD"
    NO_SUCH_MELD = "NO_SUCH_MELD"
    LAYOFF_DOES_NOT_FIT = "LAYOFF_DOES_NOT_FIT"
    LAYOFF_JOKER_NOT_ALLOWED = "LAYOFF_JOKER_NOT_ALLOWED"
    LAYOFF_ON_OPENING_TURN = "LAYOFF_ON_OPENING_TURN"
    POSITION_HELD_BY_JOKER = "POSITION_HELD_BY_JOKER"
    EXTRA_MELD_NOT_ALLOWED = "EXTRA_MELD_NOT_ALLOWED"
    SWAP_NOT_ALLOWED = "SWAP_NOT_ALLOWED"
    SWAP_DOES_NOT_MATCH = "SWAP_DOES_NOT_MATCH"
    BLOCKED_DISCARD = "BLOCKED_DISCARD"
    LAST_CARD_BLOCKED = "LAST_CARD_BLOCKED"
    NO_DISCARD_THIS_ROUND = "NO_DISCARD_THIS_ROUND"
    END_TURN_NOT_ALLOWED = "END_TURN_NOT_ALLOWED"
    CLAIM_WINDOW_OPEN = "CLAIM_WINDOW_OPEN"
    NO_CLAIM_WINDOW = "NO_CLAIM_WINDOW"
    ALREADY_ANSWERED = "ALREADY_ANSWERED"
    OWN_DISCARD = "OWN_DISCARD"
    CLAIM_STOCK_EMPTY = "CLAIM_STOCK_EMPTY"


class GlintwickError(Exception):
    """Base of every error the engine raises on purpose."""


class InvalidActionError(GlintwickError, ValueError):
    """The action or input is malformed: no game state could make it legal."""


class IllegalActionError(GlintwickError):
    """The action is well-formed but the rules forbid it now."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message


#: characters of client input an error message quotes at most
EXCERPT_CHARS = 40


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for an error message that
    quotes client input (a message travels in a gRPC trailer, which has a size limit)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def checked_int(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    """``value`` when it is an int in ``low..high``, else InvalidActionError (stored input)."""
    if type(value) is not int or value < low or (high is not None and value > high):
        raise InvalidActionError(
            f"{what} must be an integer in {low}..{high}, not {excerpt(value)}"
        )
    return value


def checked_bool(value: Any, what: str) -> bool:
    """``value`` when it is a bool, else InvalidActionError (stored input)."""
    if type(value) is not bool:
        raise InvalidActionError(f"{what} must be true or false, not {excerpt(value)}")
    return value
