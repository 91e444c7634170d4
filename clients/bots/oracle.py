"""``oracle``: ``montecarlo`` that may look at every card — for measuring, never for play.

In process (the tournament's in-process runner, the benchmark) the runner hands it
the true game state through :meth:`OracleBot.attach`; it then simulates on that
state instead of on random determinizations: it knows the other hands and the stock
order.  Through the public API no state is attached — a server never reveals hidden
cards — and it plays exactly like ``montecarlo``.  The gap between it and the fair bots (``strong``
first) measures what hidden information costs them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from clients.bots.base import Situation
from clients.bots.montecarlo import MonteCarloBot
from engine.game import GameState


class OracleBot(MonteCarloBot):
    name = "oracle"

    def __init__(self, seed: int = 0, state: Callable[[], GameState] | None = None) -> None:
        super().__init__(seed)
        self.state = state

    def attach(self, state: Callable[[], GameState]) -> None:
        """Give the oracle the true state (in-process play only)."""
        self.state = state

    def worlds(self, sit: Situation, rng: random.Random) -> list[GameState]:
        if self.state is None:
            return super().worlds(sit, rng)
        return [self.state()] * self.determinizations
