"""Which of the engine's turns are the environment's decisions (numpy-free: the
tournament's recorder asks it too).

The engine waits in a May I? window for every seat's answer.  The environment asks
only those whose answer can matter: a seat passes by itself when a seat before it in
priority order has claimed (the first claimant takes the card) or when passing is all
it may do (the stock cannot pay the penalty card).
"""

from __future__ import annotations

from engine.game import GameState, Phase
from engine.game.claims import discarder, priority

__all__ = ["forced_pass"]


def forced_pass(state: GameState, seat: int) -> bool:
    """Whether ``seat``'s answer in the open window is a pass nobody needs to ask for."""
    if state.phase is not Phase.CLAIM:
        return False
    if not state.stock:
        return True
    answers = state.claim_answers
    for s in priority(state.seats, discarder(state)):
        if s == seat:
            return False
        if answers[s]:
            return True
    return False
