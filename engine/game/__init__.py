"""The game state machine, one module a concept, behind the one import path ``engine.game``."""

from engine.game.dealing import arrange_deck
from engine.game.state import GameState, Phase, Result

__all__ = ["GameState", "Phase", "Result", "arrange_deck"]
