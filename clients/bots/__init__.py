"""The built-in bots; importing this package registers them (see ``base.BOTS``)."""

from clients.bots import greedy, montecarlo, oracle, random_bot, strong
from clients.bots.base import BOTS, Bot, make_bot, register

__all__ = [
    "BOTS",
    "Bot",
    "greedy",
    "make_bot",
    "montecarlo",
    "oracle",
    "random_bot",
    "register",
    "strong",
]
