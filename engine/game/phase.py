"""Where a game stands: the phase every rule and every query reads first."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Phase(StrEnum):
    """Where the game stands.  In ``CLAIM`` (a May I? window after a discard, see
    :mod:`engine.game.claims`) ``current`` is already the seat whose turn comes next."""

    DRAW = "draw"  # current seat must draw
    PLAY = "play"  # current seat has drawn: melds, lay-offs, swaps, discard / end turn
    CLAIM = "claim"  # May-I window after a discard: seats answer claim/pass
    GAME_OVER = "game_over"


# The members as plain module constants, for the hot path: Python 3.11 reads
# ``Enum.MEMBER`` through EnumType's ``__getattr__`` hook, ten times a global's cost.
DRAW_PHASE: Final = Phase.DRAW
PLAY_PHASE: Final = Phase.PLAY
CLAIM_PHASE: Final = Phase.CLAIM
GAME_OVER: Final = Phase.GAME_OVER
