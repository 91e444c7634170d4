"""Bots: the interface (``base``), the registry (``registry``) and the built-in bots.

The built-in bots register through the ``glintwick.bots`` entry-point group like any
plugin (pyproject.toml); ``make_bot("greedy")`` or ``make_bot("pkg.mod:MyBot")``
makes one.
"""

from clients.bots.base import Bot, Situation
from clients.bots.registry import (
    BOTS,
    BotFactory,
    BotSpecError,
    bot_name,
    bot_names,
    known_bots,
    make_bot,
    resolve,
)

__all__ = [
    "BOTS",
    "Bot",
    "BotFactory",
    "BotSpecError",
    "Situation",
    "bot_name",
    "bot_names",
    "known_bots",
    "make_bot",
    "resolve",
]
