"""``random``: every legal action equally likely (the baseline)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots.base import Bot, Situation
from engine.actions import Action


class RandomBot(Bot):
    name = "random"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        return legal[rng.randrange(len(legal))]
