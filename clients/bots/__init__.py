"""Bots: the interface (``base``), the registry (``registry``) and the built-in bots.

The built-in bots register through the ``glintwick.bots`` entry-point group like any
plugin (pyproject.toml); ``make_bot("greedy")`` or ``make_bot("pkg.mod:MyBot")``
makes one.
"""

from clients.compiled import choose_form

# Decided before any module of the package loads: "compiled" (the tracking module's
# mypyc build, clients/compiled.py), or "pure: " and why the source runs instead.
CLIENTS_FORM: str = choose_form(__name__)

from clients.bots.base import Bot, Situation  # noqa: E402
from clients.bots.registry import (  # noqa: E402
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
    "CLIENTS_FORM",
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
