"""The game state machine, one module a concept, behind the one import path ``engine.game``."""

from engine.game.dealing import arrange_deck
from engine.game.phase import Phase
from engine.game.state import GameState, Result

__all__ = ["GameState", "Phase", "Result", "arrange_deck"]
