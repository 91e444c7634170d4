"""The game state machine, one module a concept, behind the one import path ``engine.game``."""

from engine.compiled import choose_form

# Decided before any module of the package loads, as the ``engine`` package decides for
# its own (engine/compiled.py): the two hold one compiled group.
ENGINE_FORM: str = choose_form(__name__)

from engine.game.dealing import arrange_deck  # noqa: E402
from engine.game.phase import Phase  # noqa: E402
from engine.game.state import GameState, Result  # noqa: E402

__all__ = ["ENGINE_FORM", "GameState", "Phase", "Result", "arrange_deck"]
